// One model API call over HTTP with the SDK retry policy around it (see retry.h).
#pragma once
#include "llm/api_error.h"
#include "llm/config.h"
#include "llm/http_client.h"
#include "llm/retry.h"

namespace mgk::llm {

struct CallOutcome {
  HttpResponse response;  // always a 2xx
  int attempts = 1;
};

// Posts `request`, retrying transient failures and waiting through `sleep` (a real sleep
// when empty) between tries. Returns the first 2xx reply; throws ApiError when a failure is
// not retryable or the retries run out. Never logs headers (they hold the key).
CallOutcome post_with_retries(const HttpRequest& request, const CallSite& site,
                              const RetryPolicy& policy, const SleepFn& sleep);

}  // namespace mgk::llm
