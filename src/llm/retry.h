// The retry policy of the official OpenAI and Anthropic SDKs, as pure functions: which
// failures are retried, and how long to wait before the next try.
//   - retried: connection failures and timeouts; HTTP 408, 409, 429, >= 500 (Anthropic's
//     529 included); never a reply too large to read;
//   - `x-should-retry: true|false` from the server overrides the status;
//   - never retried, whatever the headers: 400, 401, 403, 404, a context overflow, and a
//     quota/spend limit that is exhausted (a 429 with OpenAI's insufficient_quota);
//   - wait: what retry-after-ms, else retry-after (seconds or an HTTP date) asks when that
//     is in (0, 60] s; otherwise 0.5 s * 2^n capped at 8 s, shortened by up to 25% jitter.
#pragma once
#include <chrono>
#include <optional>

#include "llm/http_client.h"

namespace mgk::llm {

struct RetryPolicy {
  int max_retries = 2;
  double initial_delay_s = 0.5;
  double max_delay_s = 8.0;
  double max_jitter = 0.25;         // fraction taken off the backoff at random
  double max_retry_after_s = 60.0;  // a longer server-requested wait is ignored
};

// Whether the failed attempt (a transport failure or a non-2xx status) is worth another try.
bool should_retry(const HttpResponse& response);

// The wait the server asks for, in seconds: retry-after-ms, then retry-after as seconds or
// an HTTP date relative to `now`. nullopt when neither header is present and parseable.
std::optional<double> requested_delay(const HttpResponse& response,
                                      std::chrono::system_clock::time_point now);

// The wait before retry number `retry` (0 for the first retry). `requested` is the
// server's wish from requested_delay(); `unit_random` is uniform in [0, 1) and sets the jitter.
double retry_delay(const RetryPolicy& policy, int retry, std::optional<double> requested,
                   double unit_random);

}  // namespace mgk::llm
