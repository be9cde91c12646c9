// The scripted server itself, spoken to through the providers' HTTP client, so that its
// recording and its failure modes are known to work for every test that relies on them.
#include "support/scripted_server.h"

#include <gtest/gtest.h>

#include "llm/http_client.h"

namespace mgk::llm {
namespace {

using mgk::test::ScriptedResponse;
using mgk::test::ScriptedServer;

HttpResponse post(const ScriptedServer& server, const std::string& path, const std::string& body,
                  double timeout_s = 5) {
  HttpRequest r;
  r.url = server.url() + path;
  r.headers = {"Content-Type: application/json", "X-Probe: yes"};
  r.body = body;
  r.timeout_s = timeout_s;
  return http_post(r);
}

TEST(ScriptedServer, AnswersInOrderAndRecordsEveryRequest) {
  ScriptedServer server({ScriptedResponse::json(201, {{"n", 1}}, {{"X-Reply", "one"}}),
                         ScriptedResponse::text(418, "teapot")});
  HttpResponse first = post(server, "/a", R"({"q": 1})");
  HttpResponse second = post(server, "/b?x=1", "not json");
  EXPECT_EQ(first.status, 201);
  EXPECT_EQ(first.body, R"({"n":1})");
  EXPECT_EQ(first.header("x-reply"), "one");
  EXPECT_EQ(first.header("content-type"), "application/json");
  EXPECT_EQ(second.status, 418);
  EXPECT_EQ(second.body, "teapot");

  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/a");
  EXPECT_EQ(requests[0].header("X-PROBE"), "yes");
  EXPECT_EQ(requests[0].json["q"], 1);
  EXPECT_EQ(requests[1].path, "/b?x=1");
  EXPECT_EQ(requests[1].body, "not json");
  EXPECT_TRUE(requests[1].json.is_null());
  EXPECT_EQ(server.unused_responses(), 0u);
}

TEST(ScriptedServer, LargeBodiesArriveWhole) {
  ScriptedServer server({ScriptedResponse::json(200, {{"ok", true}})});
  std::string big = "{\"text\": \"" + std::string(3 << 20, 'k') + "\"}";
  EXPECT_EQ(post(server, "/big", big).status, 200);
  EXPECT_EQ(server.requests().at(0).body.size(), big.size());
}

TEST(ScriptedServer, RunningOutOfScriptIsALoud500) {
  ScriptedServer server;
  HttpResponse r = post(server, "/late", "{}");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.header("x-should-retry"), "false");
  EXPECT_NE(r.body.find("request 1 (POST /late) came after the script's 0 responses ran out"),
            std::string::npos) << r.body;
}

TEST(ScriptedServer, DropHangAndDelayLookLikeTheRealFailures) {
  ScriptedServer server({ScriptedResponse::drop(), ScriptedResponse::hang(),
                         ScriptedResponse::json(200, {}).after(std::chrono::milliseconds(3000)),
                         ScriptedResponse::json(200, {{"late", false}}).after(std::chrono::milliseconds(50))});
  EXPECT_EQ(post(server, "/drop", "{}").failure, HttpResponse::Failure::kConnection);
  EXPECT_EQ(post(server, "/hang", "{}", 0.2).failure, HttpResponse::Failure::kTimeout);
  EXPECT_EQ(post(server, "/slow", "{}", 0.2).failure, HttpResponse::Failure::kTimeout);
  HttpResponse ok = post(server, "/fine", "{}");  // not held up by the abandoned delay
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(server.request_count(), 4u);
}

}  // namespace
}  // namespace mgk::llm
