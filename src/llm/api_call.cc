#include "llm/api_call.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "common/interrupt.h"
#include "common/log.h"

namespace mgk::llm {
namespace {

double unit_random() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

// Waits between tries, in short slices so that Ctrl-C (the request's cancel flag) ends the
// wait at once.
void wait(const SleepFn& sleep, double seconds, const std::atomic<bool>* cancel) {
  if (sleep) {
    sleep(seconds);
  } else {
    using Clock = std::chrono::steady_clock;
    const Clock::duration slice = std::chrono::milliseconds(50);
    const Clock::time_point until =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    for (Clock::time_point now = Clock::now(); now < until; now = Clock::now()) {
      if (cancel != nullptr && cancel->load()) break;
      std::this_thread::sleep_for(std::min(slice, until - now));
    }
  }
  if (cancel != nullptr && cancel->load()) throw Interrupted();
}

std::string failure_summary(const HttpResponse& r, const CallSite& site) {
  switch (r.failure) {
    case HttpResponse::Failure::kTimeout: return "timeout from " + site.host();
    case HttpResponse::Failure::kConnection:
      return "connection to " + site.host() + " failed (" + excerpt(r.failure_detail, "") + ")";
    case HttpResponse::Failure::kTooLarge:  // never retried
    case HttpResponse::Failure::kNone: break;
  }
  return std::to_string(r.status) + " from " + site.host();
}

}  // namespace

CallOutcome post_with_retries(const HttpRequest& request, const CallSite& site,
                              const RetryPolicy& policy, const SleepFn& sleep) {
  const int max_attempts = policy.max_retries + 1;
  for (int attempt = 1;; ++attempt) {
    log::debug("POST " + request.url + " for model '" + site.model + "' (try " +
               std::to_string(attempt) + " of " + std::to_string(max_attempts) + ")");
    HttpResponse response = http_post(request);
    bool transport_failed = response.failure != HttpResponse::Failure::kNone;
    if (!transport_failed && response.status >= 200 && response.status < 300)
      return CallOutcome{std::move(response), attempt};

    if (response.failure == HttpResponse::Failure::kTooLarge)
      throw reply_too_large(site, response.failure_detail, attempt);
    bool retryable = should_retry(response);
    if (!retryable || attempt == max_attempts) {
      bool gave_up = retryable;  // retryable, but no tries left
      if (transport_failed)
        throw transport_error(site, response.failure == HttpResponse::Failure::kTimeout,
                              response.failure_detail, attempt, gave_up);
      throw http_error(site, response.status, response.body, attempt, gave_up);
    }
    double delay = retry_delay(policy, attempt - 1,
                               requested_delay(response, std::chrono::system_clock::now()),
                               unit_random());
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.2f", delay);
    log::info(failure_summary(response, site) + " (try " + std::to_string(attempt) + " of " +
              std::to_string(max_attempts) + "); retrying in " + seconds + " s");
    wait(sleep, delay, request.cancel);
  }
}

}  // namespace mgk::llm
