#include "llm/api_error.h"

#include <cstdio>

#include "llm/error_reply.h"

namespace mgk::llm {
namespace {

using Kind = ApiError::Kind;

std::string tries_phrase(int attempts, bool gave_up) {
  if (gave_up) return ", still failing after " + std::to_string(attempts) + " tries";
  if (attempts > 1) return " (on try " + std::to_string(attempts) + ")";
  return "";
}

// The verdict and the advice for one status, e.g. {"the API key ... was rejected", "check it"}.
struct Meaning {
  Kind kind;
  std::string what;
  std::string advice;
};

Meaning meaning_of(const CallSite& site, int status, const VendorError& vendor) {
  const std::string key = site.key_env.empty() ? "" : "$" + site.key_env;
  if (is_quota_exhausted(status, vendor))
    return {Kind::kQuotaExhausted, "the account's quota or spend limit is exhausted",
            "add credits or raise the limit with the provider"};
  if (is_context_overflow(status, vendor))
    return {Kind::kContextOverflow,
            "the prompt does not fit the context window of model '" + site.model + "'",
            "shorten the conversation or lower max_tokens"};
  if (vendor.type == "overloaded_error" || status == 529)
    return {Kind::kOverloaded, "the API is overloaded", "retry later"};
  switch (status) {
    case 401:
      if (key.empty())
        return {Kind::kAuth, "the server wants an API key and endpoint '" + site.endpoint +
                                 "' sends none",
                "set \"api_key_env\" for it in the config file"};
      return {Kind::kAuth, "the API key in " + key + " was rejected", "check it"};
    case 403:
      return {Kind::kPermission,
              "the API key" + (key.empty() ? "" : " in " + key) +
                  " may not use model '" + site.model + "'",
              "check the key's permissions or pick another model"};
    case 404:
      return {Kind::kNotFound, "model '" + site.model + "' or URL " + site.url + " not found",
              "check the model name and the endpoint's base URL"};
    case 400:
    case 422:
      return {Kind::kBadRequest, "the request was refused as invalid",
              "check the model's supported options (temperature, reasoning_effort, max_tokens)"};
    case 408:
      return {Kind::kTimeout, "the server timed out reading the request", "retry later"};
    case 429:
      return {Kind::kRateLimited, "rate limited",
              "wait, lower the number of concurrent calls, or raise the account's rate limit"};
    default:
      break;
  }
  if (status >= 500)
    return {Kind::kServer, "server error", "the provider is having trouble; retry later"};
  return {Kind::kOther, "unexpected HTTP status", "check the endpoint's base URL"};
}

}  // namespace

const char* to_string(ApiError::Kind kind) {
  switch (kind) {
    case Kind::kAuth: return "auth";
    case Kind::kPermission: return "permission";
    case Kind::kNotFound: return "not_found";
    case Kind::kBadRequest: return "bad_request";
    case Kind::kContextOverflow: return "context_overflow";
    case Kind::kQuotaExhausted: return "quota_exhausted";
    case Kind::kRateLimited: return "rate_limited";
    case Kind::kOverloaded: return "overloaded";
    case Kind::kServer: return "server";
    case Kind::kConnection: return "connection";
    case Kind::kTimeout: return "timeout";
    case Kind::kMalformedReply: return "malformed_reply";
    case Kind::kOther: return "other";
  }
  return "other";
}

std::string CallSite::host() const {
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  size_t end = url.find_first_of("/?#", start);
  return url.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::string excerpt(const std::string& text, const std::string& secret, size_t limit) {
  std::string s = text;
  if (!secret.empty()) {
    for (size_t at = s.find(secret); at != std::string::npos; at = s.find(secret, at + 3))
      s.replace(at, secret.size(), "***");
  }
  std::string line;
  bool in_space = false;
  for (char c : s) {
    bool space = c == '\n' || c == '\r' || c == '\t' || c == ' ';
    if (space && (in_space || line.empty())) continue;
    line += space ? ' ' : c;
    in_space = space;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (line.size() > limit) line = line.substr(0, limit) + "...";
  return line;
}

ApiError http_error(const CallSite& site, int status, const std::string& body, int attempts,
                    bool gave_up) {
  VendorError vendor = parse_vendor_error(body);
  Meaning m = meaning_of(site, status, vendor);
  std::string detail;
  if (!vendor.message.empty() || !vendor.name().empty()) {
    detail = vendor.name().empty() ? "" : vendor.name() + ": ";
    detail += vendor.message;
  } else {
    detail = body;
  }
  detail = excerpt(detail, site.secret);
  std::string message = std::to_string(status) + " from " + site.host() + ": " + m.what +
                        tries_phrase(attempts, gave_up) + "; " + m.advice;
  if (!detail.empty()) message += " (" + detail + ")";
  return ApiError(m.kind, message, status, vendor.name(), attempts);
}

ApiError transport_error(const CallSite& site, bool timed_out, const std::string& detail,
                         int attempts, bool gave_up) {
  std::string message;
  if (timed_out) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", site.timeout_s);
    message = "no reply from " + site.host() + " within " + seconds + " s" +
              tries_phrase(attempts, gave_up) +
              "; the server is slow or stuck: retry later or raise defaults.timeout_s in the "
              "config";
  } else {
    message = "could not reach " + site.host() + tries_phrase(attempts, gave_up) +
              "; check that the server is up and that " + site.url + " is the right URL";
  }
  std::string d = excerpt(detail, site.secret);
  if (!d.empty()) message += " (" + d + ")";
  return ApiError(timed_out ? Kind::kTimeout : Kind::kConnection, message, 0, "", attempts);
}

ApiError reply_too_large(const CallSite& site, const std::string& detail, int attempts) {
  return ApiError(Kind::kMalformedReply,
                  "reply from " + site.host() + " for model '" + site.model + "' is too large: " +
                      detail + ", and no model reply is that large; mgk stopped reading it. " +
                      "Check the endpoint's base URL (or raise defaults.max_reply_mib in the " +
                      "config)",
                  0, "", attempts);
}

ApiError malformed_reply(const CallSite& site, const std::string& problem,
                         const std::string& body, int status, int attempts) {
  std::string shown = body.empty() ? "empty body" : "body: " + excerpt(body, site.secret);
  return ApiError(Kind::kMalformedReply,
                  "reply from " + site.host() + " for model '" + site.model + "' " + problem +
                      "; the server may not speak this API: check the endpoint's kind and "
                      "base URL (" + shown + ")",
                  status, "", attempts);
}

}  // namespace mgk::llm
