#include "llm/error_reply.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

namespace mgk::llm {
namespace {

using nlohmann::json;

std::string as_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return "";
}

void read_fields(const json& obj, VendorError& out) {
  if (obj.contains("type")) out.type = as_text(obj["type"]);
  if (obj.contains("code")) out.code = as_text(obj["code"]);
  if (obj.contains("message")) out.message = as_text(obj["message"]);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool mentions_any(const std::string& haystack, std::initializer_list<const char*> needles) {
  std::string h = lower(haystack);
  return std::any_of(needles.begin(), needles.end(),
                     [&](const char* n) { return h.find(n) != std::string::npos; });
}

}  // namespace

VendorError parse_vendor_error(const std::string& body) {
  VendorError out;
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return out;
  if (j.contains("error")) {
    const json& e = j["error"];
    if (e.is_object()) read_fields(e, out);
    else out.message = as_text(e);
  } else if (j.value("object", "") == "error") {
    read_fields(j, out);
  } else if (j.contains("detail")) {
    out.message = j["detail"].is_string() ? j["detail"].get<std::string>() : j["detail"].dump();
  }
  return out;
}

bool is_quota_exhausted(int status, const VendorError& error) {
  if (status == 402) return true;
  if (error.code == "insufficient_quota" || error.type == "insufficient_quota") return true;
  return mentions_any(error.message, {"exceeded your current quota", "credit balance is too low",
                                      "insufficient balance", "insufficient credits",
                                      "usage limits", "spend limit", "billing hard limit"});
}

bool is_context_overflow(int status, const VendorError& error) {
  if (error.code == "context_length_exceeded") return true;
  if (status == 413) return true;  // Anthropic request_too_large
  if (status != 400 && status != 422) return false;
  return mentions_any(error.message,
                      {"maximum context length", "context length", "context window",
                       "context limit", "prompt is too long", "too many tokens",
                       "context_length_exceeded"});
}

}  // namespace mgk::llm
