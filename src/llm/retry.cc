#include "llm/retry.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include "llm/error_reply.h"

namespace mgk::llm {
namespace {

// Parses "Wed, 21 Oct 2015 07:28:00 GMT" (RFC 7231 IMF-fixdate) as UTC.
std::optional<std::chrono::system_clock::time_point> parse_http_date(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  time_t t = timegm(&tm);
  if (t == static_cast<time_t>(-1)) return std::nullopt;
  return std::chrono::system_clock::from_time_t(t);
}

std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

bool should_retry(const HttpResponse& response) {
  // A body too large would be as large again; connection failures and timeouts are transient.
  if (response.failure == HttpResponse::Failure::kTooLarge) return false;
  if (response.failure != HttpResponse::Failure::kNone) return true;
  int status = response.status;
  if (status == 400 || status == 401 || status == 403 || status == 404) return false;
  VendorError vendor = parse_vendor_error(response.body);
  if (is_quota_exhausted(status, vendor) || is_context_overflow(status, vendor)) return false;
  std::string wish = response.header("x-should-retry");
  if (wish == "true") return true;
  if (wish == "false") return false;
  return status == 408 || status == 409 || status == 429 || status >= 500;
}

std::optional<double> requested_delay(const HttpResponse& response,
                                      std::chrono::system_clock::time_point now) {
  if (auto ms = parse_number(response.header("retry-after-ms"))) return *ms / 1000.0;
  std::string after = response.header("retry-after");
  if (auto seconds = parse_number(after)) return *seconds;
  if (auto date = parse_http_date(after))
    return std::chrono::duration<double>(*date - now).count();
  return std::nullopt;
}

double retry_delay(const RetryPolicy& policy, int retry, std::optional<double> requested,
                   double unit_random) {
  if (requested && *requested > 0 && *requested <= policy.max_retry_after_s) return *requested;
  double backoff =
      std::min(policy.initial_delay_s * std::pow(2.0, std::min(retry, 1000)), policy.max_delay_s);
  return std::max(0.0, backoff * (1.0 - policy.max_jitter * unit_random));
}

}  // namespace mgk::llm
