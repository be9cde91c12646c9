// The retry policy and error handling, over real HTTP, for both wire formats: each test
// runs once against an OpenAI-style and once against an Anthropic-style endpoint.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>

#include "common/interrupt.h"
#include "common/log.h"
#include "common/file.h"
#include "process/run.h"
#include "support/test_paths.h"
#include "llm/api_error.h"
#include "llm/provider.h"
#include "llm_test_env.h"
#include "support/scripted_server.h"

namespace mgk::llm {
namespace {

using mgk::test::ScriptedResponse;
using mgk::test::ScriptedServer;
using nlohmann::json;
using test::ScopedEnv;

enum class Api { kOpenAI, kAnthropic };

class ProviderRetryTest : public ::testing::TestWithParam<Api> {
 protected:
  bool anthropic() const { return GetParam() == Api::kAnthropic; }
  std::string spec() const { return anthropic() ? "anthropic:claude-sonnet-4-5" : "openai:gpt-4o"; }
  std::string key_env() const { return anthropic() ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY"; }
  std::string path() const { return anthropic() ? "/v1/messages" : "/v1/chat/completions"; }

  ScriptedResponse ok(const std::string& text, const std::string& finish = "") const {
    if (anthropic())
      return ScriptedResponse::json(
          200, mgk::test::anthropic_message_reply(text, {10, 5}, finish.empty() ? "end_turn" : finish));
    return ScriptedResponse::json(
        200, mgk::test::openai_chat_reply(text, {10, 5}, finish.empty() ? "stop" : finish));
  }
  ScriptedResponse error(int status, const std::string& type, const std::string& message,
                         ScriptedResponse::Headers headers = {}) const {
    json body = anthropic() ? mgk::test::anthropic_error(type, message)
                            : mgk::test::openai_error(type, message, type);
    return ScriptedResponse::json(status, body, std::move(headers));
  }

  std::unique_ptr<Provider> provider(ScriptedServer& server, double timeout_s = 5) {
    config_ = test::config_for(server, waits_, timeout_s);
    return make_provider(spec(), config_);
  }
  static Request hello() {
    Request r;
    r.messages = {{"user", "hello"}};
    return r;
  }
  // Runs the call expecting an ApiError, and returns it.
  ApiError expect_error(Provider& p) {
    try {
      p.complete(hello());
    } catch (const ApiError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      return e;
    }
    ADD_FAILURE() << "complete() returned instead of throwing ApiError";
    return ApiError(ApiError::Kind::kOther, "", 0, "", 0);
  }

  ScopedEnv openai_key_{"OPENAI_API_KEY", test::kOpenAIKey};
  ScopedEnv anthropic_key_{"ANTHROPIC_API_KEY", test::kAnthropicKey};
  std::vector<double> waits_;
  Config config_;
};

TEST_P(ProviderRetryTest, RetryAfterSecondsIsHonoured) {
  ScriptedServer server({error(429, "rate_limit_error", "slow down", {{"retry-after", "3"}}),
                         ok("fine")});
  Reply reply = provider(server)->complete(hello());
  EXPECT_EQ(reply.text, "fine");
  EXPECT_EQ(reply.attempts, 2);
  EXPECT_EQ(waits_, std::vector<double>{3.0});
  EXPECT_EQ(server.request_count(), 2u);
}

TEST_P(ProviderRetryTest, RetryAfterMsWinsOverRetryAfter) {
  ScriptedServer server(
      {error(429, "rate_limit_error", "slow down", {{"retry-after-ms", "1500"}, {"retry-after", "9"}}),
       ok("fine")});
  provider(server)->complete(hello());
  EXPECT_EQ(waits_, std::vector<double>{1.5});
}

TEST_P(ProviderRetryTest, RetryAfterAsHttpDateIsHonoured) {
  std::time_t in_five = std::time(nullptr) + 5;
  char date[64];
  std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", std::gmtime(&in_five));
  ScriptedServer server({error(429, "rate_limit_error", "slow down", {{"retry-after", date}}),
                         ok("fine")});
  provider(server)->complete(hello());
  ASSERT_EQ(waits_.size(), 1u);
  EXPECT_GT(waits_[0], 3.0);  // whole-second date, a little time has passed
  EXPECT_LE(waits_[0], 5.0);
}

TEST_P(ProviderRetryTest, RetryAfterOverSixtySecondsFallsBackToBackoff) {
  ScriptedServer server({error(429, "rate_limit_error", "slow down", {{"retry-after", "120"}}),
                         ok("fine")});
  provider(server)->complete(hello());
  ASSERT_EQ(waits_.size(), 1u);
  EXPECT_GE(waits_[0], 0.375);
  EXPECT_LE(waits_[0], 0.5);
}

TEST_P(ProviderRetryTest, ServerErrorsAreRetriedWithExponentialBackoff) {
  ScriptedServer server({error(500, "server_error", "oops"), error(502, "server_error", "oops"),
                         ok("third time")});
  Reply reply = provider(server)->complete(hello());
  EXPECT_EQ(reply.text, "third time");
  EXPECT_EQ(reply.attempts, 3);
  ASSERT_EQ(waits_.size(), 2u);
  EXPECT_GE(waits_[0], 0.375);
  EXPECT_LE(waits_[0], 0.5);
  EXPECT_GE(waits_[1], 0.75);
  EXPECT_LE(waits_[1], 1.0);
}

TEST_P(ProviderRetryTest, OverloadedIsRetried) {
  ScriptedServer server({error(529, "overloaded_error", "Overloaded"), ok("fine")});
  Reply reply = provider(server)->complete(hello());
  EXPECT_EQ(reply.attempts, 2);
}

TEST_P(ProviderRetryTest, DroppedConnectionIsRetried) {
  ScriptedServer server({ScriptedResponse::drop(), ok("after the drop")});
  Reply reply = provider(server)->complete(hello());
  EXPECT_EQ(reply.text, "after the drop");
  EXPECT_EQ(reply.attempts, 2);
  EXPECT_EQ(waits_.size(), 1u);
}

TEST_P(ProviderRetryTest, TimeoutIsRetried) {
  ScriptedServer server({ScriptedResponse::hang(), ok("after the hang")});
  Reply reply = provider(server, /*timeout_s=*/0.3)->complete(hello());
  EXPECT_EQ(reply.text, "after the hang");
  EXPECT_EQ(reply.attempts, 2);
}

TEST_P(ProviderRetryTest, SlowReplyPastTheTimeoutIsRetried) {
  ScriptedServer server({ok("too late").after(std::chrono::milliseconds(2000)), ok("in time")});
  Reply reply = provider(server, /*timeout_s=*/0.3)->complete(hello());
  EXPECT_EQ(reply.text, "in time");
}

TEST_P(ProviderRetryTest, TimeoutsExhaustedSayTimeoutAndTries) {
  ScriptedServer server({ScriptedResponse::hang(), ScriptedResponse::hang(), ScriptedResponse::hang()});
  auto p = provider(server, /*timeout_s=*/0.2);
  ApiError e = expect_error(*p);
  EXPECT_EQ(e.kind(), ApiError::Kind::kTimeout);
  EXPECT_EQ(e.attempts(), 3);
  EXPECT_NE(std::string(e.what()).find("within 0.2 s, still failing after 3 tries"),
            std::string::npos) << e.what();
}

TEST_P(ProviderRetryTest, ExhaustedRetriesSayHowManyTries) {
  ScriptedServer server({error(503, "server_error", "down"), error(503, "server_error", "down"),
                         error(503, "server_error", "down"), ok("never reached")});
  auto p = provider(server);
  ApiError e = expect_error(*p);
  EXPECT_EQ(e.kind(), ApiError::Kind::kServer);
  EXPECT_EQ(e.http_status(), 503);
  EXPECT_EQ(e.attempts(), 3);
  EXPECT_TRUE(e.retried());
  EXPECT_NE(std::string(e.what()).find("still failing after 3 tries"), std::string::npos) << e.what();
  EXPECT_EQ(server.request_count(), 3u);
  EXPECT_EQ(server.unused_responses(), 1u);
}

TEST_P(ProviderRetryTest, MaxRetriesFromConfigIsObeyed) {
  ScriptedServer server({error(500, "server_error", "a"), error(500, "server_error", "b")});
  config_ = test::config_for(server, waits_);
  config_.max_retries = 0;
  auto p = make_provider(spec(), config_);
  ApiError e = expect_error(*p);
  EXPECT_EQ(e.attempts(), 1);
  EXPECT_EQ(server.request_count(), 1u);
}

TEST_P(ProviderRetryTest, UnauthorizedIsNotRetriedAndNamesTheVariable) {
  std::string key = anthropic() ? test::kAnthropicKey : test::kOpenAIKey;
  ScriptedServer server({error(401, "authentication_error", "Incorrect API key provided: " + key),
                         ok("never reached")});
  auto p = provider(server);
  ApiError e = expect_error(*p);
  std::string what = e.what();
  EXPECT_EQ(e.kind(), ApiError::Kind::kAuth);
  EXPECT_EQ(e.http_status(), 401);
  EXPECT_FALSE(e.retried());
  EXPECT_EQ(server.request_count(), 1u);
  EXPECT_TRUE(waits_.empty());
  EXPECT_NE(what.find("401 from 127.0.0.1:"), std::string::npos) << what;
  EXPECT_NE(what.find("$" + key_env() + " was rejected; check it"), std::string::npos) << what;
  EXPECT_EQ(what.find(key), std::string::npos) << "the key leaked into: " << what;
}

TEST_P(ProviderRetryTest, BadRequestIsNotRetriedEvenWhenTheServerSaysRetry) {
  ScriptedServer server({error(400, "invalid_request_error", "temperature out of range",
                               {{"x-should-retry", "true"}}),
                         ok("never reached")});
  auto p = provider(server);
  ApiError e = expect_error(*p);
  EXPECT_EQ(e.kind(), ApiError::Kind::kBadRequest);
  EXPECT_EQ(server.request_count(), 1u);
  EXPECT_NE(std::string(e.what()).find("temperature out of range"), std::string::npos) << e.what();
}

TEST_P(ProviderRetryTest, NotFoundIsNotRetried) {
  ScriptedServer server({error(404, "not_found_error", "model: nope"), ok("never reached")});
  auto p = provider(server);
  ApiError e = expect_error(*p);
  EXPECT_EQ(e.kind(), ApiError::Kind::kNotFound);
  EXPECT_EQ(server.request_count(), 1u);
}

TEST_P(ProviderRetryTest, ExhaustedQuotaIsNotRetried) {
  ScriptedServer server;
  if (anthropic())
    server.push(error(400, "invalid_request_error",
                      "Your credit balance is too low to access the Anthropic API."));
  else
    server.push(ScriptedResponse::json(
        429, mgk::test::openai_error("insufficient_quota",
                                     "You exceeded your current quota, please check your plan "
                                     "and billing details.",
                                     "insufficient_quota")));
  server.push(ok("never reached"));
  auto p = provider(server);
  ApiError e = expect_error(*p);
  EXPECT_EQ(e.kind(), ApiError::Kind::kQuotaExhausted);
  EXPECT_EQ(server.request_count(), 1u);
  EXPECT_NE(std::string(e.what()).find("quota or spend limit is exhausted"), std::string::npos)
      << e.what();
  if (!anthropic()) {
    EXPECT_EQ(e.vendor_type(), "insufficient_quota");
  }
}

TEST_P(ProviderRetryTest, ContextOverflowIsNotRetriedAndNamed) {
  std::string message = anthropic() ? "prompt is too long: 210000 tokens > 200000 maximum"
                                    : "This model's maximum context length is 128000 tokens.";
  ScriptedServer server({error(400, "invalid_request_error", message), ok("never reached")});
  auto p = provider(server);
  ApiError e = expect_error(*p);
  EXPECT_EQ(e.kind(), ApiError::Kind::kContextOverflow);
  EXPECT_EQ(server.request_count(), 1u);
  EXPECT_NE(std::string(e.what()).find("does not fit the context window"), std::string::npos)
      << e.what();
}

TEST_P(ProviderRetryTest, ShouldRetryFalseIsHonoured) {
  ScriptedServer server({error(500, "server_error", "do not bother", {{"x-should-retry", "false"}}),
                         ok("never reached")});
  auto p = provider(server);
  ApiError e = expect_error(*p);
  EXPECT_EQ(e.kind(), ApiError::Kind::kServer);
  EXPECT_FALSE(e.retried());
  EXPECT_EQ(server.request_count(), 1u);
}

TEST_P(ProviderRetryTest, ShouldRetryTrueRetriesAnOtherwiseFinalStatus) {
  ScriptedServer server({error(422, "invalid_request_error", "try again", {{"x-should-retry", "true"}}),
                         ok("fine")});
  Reply reply = provider(server)->complete(hello());
  EXPECT_EQ(reply.attempts, 2);
}

TEST_P(ProviderRetryTest, MalformedJsonIsAnErrorWithAnExcerpt) {
  ScriptedServer server({ScriptedResponse::text(200, "<html>gateway says hi</html>")});
  auto p = provider(server);
  ApiError e = expect_error(*p);
  EXPECT_EQ(e.kind(), ApiError::Kind::kMalformedReply);
  EXPECT_EQ(server.request_count(), 1u);
  EXPECT_NE(std::string(e.what()).find("is not valid JSON"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("<html>gateway says hi</html>"), std::string::npos) << e.what();
}

TEST_P(ProviderRetryTest, EmptyReplyIsAnError) {
  ScriptedServer server({ScriptedResponse::text(200, "")});
  auto p = provider(server);
  ApiError e = expect_error(*p);
  EXPECT_EQ(e.kind(), ApiError::Kind::kMalformedReply);
  EXPECT_NE(std::string(e.what()).find("is empty"), std::string::npos) << e.what();
}

TEST_P(ProviderRetryTest, ReplyWithoutTheExpectedFieldsIsAnError) {
  ScriptedServer server({ScriptedResponse::json(200, {{"id", "x"}, {"choices", json::array()}})});
  auto p = provider(server);
  ApiError e = expect_error(*p);
  EXPECT_EQ(e.kind(), ApiError::Kind::kMalformedReply);
  EXPECT_NE(std::string(e.what()).find(anthropic() ? "content[]" : "choices[0]"), std::string::npos)
      << e.what();
}

TEST_P(ProviderRetryTest, LengthFinishIsMapped) {
  ScriptedServer server({ok("cut sho", anthropic() ? "max_tokens" : "length")});
  Reply reply = provider(server)->complete(hello());
  EXPECT_EQ(reply.finish, FinishReason::kLength);
  EXPECT_EQ(reply.raw_finish, anthropic() ? "max_tokens" : "length");
}

TEST_P(ProviderRetryTest, ExhaustedScriptFailsLoudly) {
  ScriptedServer server;
  auto p = provider(server);
  ApiError e = expect_error(*p);
  EXPECT_EQ(server.request_count(), 1u);
  EXPECT_NE(std::string(e.what()).find("script's 0 responses ran out"), std::string::npos) << e.what();
}

TEST_P(ProviderRetryTest, UnreachableServerIsAConnectionErrorAfterRetries) {
  std::string url;
  { ScriptedServer gone; url = gone.url(); }  // a loopback port nobody listens on now
  ScriptedServer unused;
  config_ = test::config_for(unused, waits_);
  config_.endpoints[anthropic() ? "anthropic" : "openai"].base_url =
      anthropic() ? url : url + "/v1";
  auto p = make_provider(spec(), config_);
  ApiError e = expect_error(*p);
  EXPECT_EQ(e.kind(), ApiError::Kind::kConnection);
  EXPECT_EQ(e.http_status(), 0);
  EXPECT_EQ(e.attempts(), 3);
  EXPECT_NE(std::string(e.what()).find("could not reach 127.0.0.1"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("after 3 tries"), std::string::npos) << e.what();
}

TEST_P(ProviderRetryTest, TheKeyIsNeverLogged) {
  std::string key = anthropic() ? test::kAnthropicKey : test::kOpenAIKey;
  ScriptedServer server({error(500, "server_error", "echo " + key), ok("fine"),
                         error(401, "authentication_error", "bad key " + key)});
  auto p = provider(server);
  log::set_verbose(true);
  ::testing::internal::CaptureStderr();
  p->complete(hello());
  std::string what;
  try {
    p->complete(hello());
  } catch (const ApiError& e) {
    what = e.what();
  }
  std::string logged = ::testing::internal::GetCapturedStderr();
  log::set_verbose(false);
  EXPECT_NE(logged.find("POST "), std::string::npos) << "debug logging did not run: " << logged;
  EXPECT_EQ(logged.find(key), std::string::npos) << logged;
  EXPECT_FALSE(what.empty());
  EXPECT_EQ(what.find(key), std::string::npos) << what;
  // The key did reach the server, in the header the API wants.
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(anthropic() ? requests[0].header("x-api-key") : requests[0].header("authorization"),
            anthropic() ? key : "Bearer " + key);
}

// Ctrl-C raises the request's cancel flag from another thread, `after` from now.
class CtrlC {
 public:
  explicit CtrlC(std::chrono::milliseconds after)
      : thread_([this, after] {
          std::this_thread::sleep_for(after);
          flag = true;
        }) {}
  ~CtrlC() { thread_.join(); }
  std::atomic<bool> flag{false};

 private:
  std::thread thread_;
};

TEST_P(ProviderRetryTest, CtrlCEndsACallThatIsWaitingForTheReply) {
  ScriptedServer server({ScriptedResponse::hang()});
  auto p = provider(server, /*timeout_s=*/60);
  CtrlC ctrl_c(std::chrono::milliseconds(300));
  Request r = hello();
  r.cancel = &ctrl_c.flag;
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(p->complete(r), Interrupted);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(server.request_count(), 1u);
}

TEST_P(ProviderRetryTest, CtrlCEndsTheWaitBeforeARetry) {
  ScriptedServer server({error(429, "rate_limit_error", "slow down", {{"retry-after", "30"}}),
                         ok("too late")});
  auto p = provider(server);
  config_.sleep = nullptr;  // a real wait, of the 30 s the server asks for
  p = make_provider(spec(), config_);
  CtrlC ctrl_c(std::chrono::milliseconds(300));
  Request r = hello();
  r.cancel = &ctrl_c.flag;
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(p->complete(r), Interrupted);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(server.request_count(), 1u);  // the retry was never sent
}

TEST_P(ProviderRetryTest, AReplyPastTheSizeCapIsRefusedNotReadWhole) {
  std::string huge = std::string(3 << 20, ' ');  // 3 MiB of padding around a valid reply
  ScriptedServer server({ScriptedResponse::text(200, "{\"pad\": \"" + huge + "\"}")});
  config_ = test::config_for(server, waits_);
  config_.max_reply_bytes = 1 << 20;
  auto p = make_provider(spec(), config_);
  ApiError e = expect_error(*p);
  EXPECT_EQ(e.kind(), ApiError::Kind::kMalformedReply);
  EXPECT_EQ(e.attempts(), 1);  // not retried: it would be as large again
  EXPECT_EQ(server.request_count(), 1u);
  EXPECT_NE(std::string(e.what()).find("is too large: the reply passed 1 MiB (decompressed)"),
            std::string::npos)
      << e.what();
}

TEST_P(ProviderRetryTest, AGzipBombIsCutAtTheCapAfterDecompression) {
  // 64 MiB of zeros gzip to about 64 KiB: small on the wire, huge once inflated.
  // (Into a file: a process's captured output is text, made valid UTF-8.)
  mgk::test::TempDir dir("mgk-gzip");
  const auto file = dir.path() / "bomb.gz";
  auto gz = process::run_tool({"sh", "-c", "head -c 67108864 /dev/zero | gzip -c > " + file.string()},
                              std::chrono::seconds(60));
  ASSERT_EQ(gz.exit_code, 0) << gz.output;
  const std::string bomb = read_file(file);
  ASSERT_LT(bomb.size(), 1u << 20);
  ScriptedServer server({ScriptedResponse::text(200, bomb).with_header("Content-Encoding", "gzip")});
  config_ = test::config_for(server, waits_);
  config_.max_reply_bytes = 4 << 20;
  auto p = make_provider(spec(), config_);
  ApiError e = expect_error(*p);
  EXPECT_EQ(e.kind(), ApiError::Kind::kMalformedReply);
  EXPECT_NE(std::string(e.what()).find("passed 4 MiB (decompressed)"), std::string::npos) << e.what();
}

INSTANTIATE_TEST_SUITE_P(BothApis, ProviderRetryTest,
                         ::testing::Values(Api::kOpenAI, Api::kAnthropic),
                         [](const auto& info) {
                           return info.param == Api::kOpenAI ? "OpenAI" : "Anthropic";
                         });

}  // namespace
}  // namespace mgk::llm
