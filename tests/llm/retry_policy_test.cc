// The retry decisions and waits as pure functions (the HTTP-level behaviour is in
// provider_retry_test.cc).
#include "llm/retry.h"

#include <gtest/gtest.h>

namespace mgk::llm {
namespace {

HttpResponse status(int code, std::map<std::string, std::string> headers = {},
                    std::string body = "") {
  HttpResponse r;
  r.status = code;
  r.headers = std::move(headers);
  r.body = std::move(body);
  return r;
}

TEST(RetryPolicy, RetriesTheStatusesTheSdksRetry) {
  for (int code : {408, 409, 429, 500, 502, 503, 504, 529}) EXPECT_TRUE(should_retry(status(code))) << code;
  for (int code : {400, 401, 403, 404, 413, 422}) EXPECT_FALSE(should_retry(status(code))) << code;
  HttpResponse dropped;
  dropped.failure = HttpResponse::Failure::kConnection;
  EXPECT_TRUE(should_retry(dropped));
  HttpResponse slow;
  slow.failure = HttpResponse::Failure::kTimeout;
  EXPECT_TRUE(should_retry(slow));
}

TEST(RetryPolicy, ShouldRetryHeaderOverridesExceptForFinalStatuses) {
  EXPECT_FALSE(should_retry(status(503, {{"x-should-retry", "false"}})));
  EXPECT_TRUE(should_retry(status(422, {{"x-should-retry", "true"}})));
  EXPECT_FALSE(should_retry(status(401, {{"x-should-retry", "true"}})));
  EXPECT_FALSE(should_retry(status(
      429, {{"x-should-retry", "true"}},
      R"({"error": {"type": "insufficient_quota", "code": "insufficient_quota", "message": "x"}})")));
}

TEST(RetryPolicy, RequestedDelayReadsMsThenSecondsThenDate) {
  auto now = std::chrono::system_clock::from_time_t(1445412480);  // Wed, 21 Oct 2015 07:28:00
  EXPECT_EQ(requested_delay(status(429, {{"retry-after-ms", "250"}, {"retry-after", "7"}}), now), 0.25);
  EXPECT_EQ(requested_delay(status(429, {{"retry-after-ms", "soon"}, {"retry-after", "7"}}), now), 7.0);
  EXPECT_EQ(requested_delay(status(429, {{"retry-after", "1.5"}}), now), 1.5);
  EXPECT_EQ(requested_delay(status(429, {{"retry-after", "Wed, 21 Oct 2015 07:28:30 GMT"}}), now), 30.0);
  EXPECT_EQ(requested_delay(status(429, {{"retry-after", "tomorrow"}}), now), std::nullopt);
  EXPECT_EQ(requested_delay(status(429), now), std::nullopt);
}

TEST(RetryPolicy, DelayHonoursReasonableRequestsElseBacksOffWithJitter) {
  RetryPolicy p;
  EXPECT_EQ(retry_delay(p, 0, 12.0, 0.9), 12.0);
  EXPECT_EQ(retry_delay(p, 0, 60.0, 0.9), 60.0);
  EXPECT_EQ(retry_delay(p, 0, 61.0, 0.0), 0.5);   // too long: ignored
  EXPECT_EQ(retry_delay(p, 0, 0.0, 0.0), 0.5);    // zero: ignored, as in the SDKs
  EXPECT_EQ(retry_delay(p, 0, -3.0, 0.0), 0.5);   // a date in the past
  EXPECT_EQ(retry_delay(p, 0, std::nullopt, 0.0), 0.5);
  EXPECT_EQ(retry_delay(p, 1, std::nullopt, 0.0), 1.0);
  EXPECT_EQ(retry_delay(p, 3, std::nullopt, 0.0), 4.0);
  EXPECT_EQ(retry_delay(p, 4, std::nullopt, 0.0), 8.0);
  EXPECT_EQ(retry_delay(p, 10, std::nullopt, 0.0), 8.0);  // capped
  EXPECT_EQ(retry_delay(p, 2, std::nullopt, 1.0), 1.5);   // 25% jitter off 2 s
}

}  // namespace
}  // namespace mgk::llm
