// No host paths in what the model reads, and a resent kernel told apart: the folders taken
// out of a text, then a whole `mgk generate --compile-only` session over loopback HTTP with
// real nvcc, whose stored conversation (the SQLite store) is searched for the sandbox, the
// compile cache and $HOME.
#include "agent/host_paths.h"

#include <gtest/gtest.h>

#include <fstream>

#include "store/store.h"
#include "support/mgk_cli.h"
#include "support/scripted_server.h"
#include "support/test_paths.h"

namespace mgk::agent {
namespace {

namespace fs = std::filesystem;

TEST(HostPaths, TakesOutEachFolderTheDeepestFirstAndOnlyWholeFolders) {
  const HostPaths paths({{"/home/ada", "~"}, {"/home/ada/.cache/mgk/sandboxes/1-abc", ""}, {"/src/mgk/primitives/", ""}});
  EXPECT_EQ(paths.relative("/home/ada/.cache/mgk/sandboxes/1-abc/kernel_turn1.cu(2): error: expected a \";\""),
            "kernel_turn1.cu(2): error: expected a \";\"");
  EXPECT_EQ(paths.relative("In file included from /src/mgk/primitives/comm/barrier.cuh:3"),
            "In file included from comm/barrier.cuh:3");
  EXPECT_EQ(paths.relative("see /home/ada/notes and /home/ada"), "see ~/notes and ~");
  EXPECT_EQ(paths.relative("/home/adam/x and /x/home/ada/y"), "/home/adam/x and /x/home/ada/y")
      << "another folder that starts the same, or ends the same, is not this one";
}

TEST(HostPaths, AResultAsTheModelReadsItHasNoneInItsLogMessageOrFailures) {
  const HostPaths paths(std::vector<std::pair<fs::path, std::string>>{{"/tmp/sb", ""}});
  results::EvalResult r;
  r.compile_log = "/tmp/sb/a.cu(1): error";
  r.message = "does not compile: /tmp/sb/a.cu(1): error";
  r.sizes.push_back({});
  r.sizes[0].failure = "rank 1 crashed; log /tmp/sb/rank1.log";
  const results::EvalResult m = paths.relative(r);
  EXPECT_EQ(m.compile_log, "a.cu(1): error");
  EXPECT_EQ(m.message, "does not compile: a.cu(1): error");
  EXPECT_EQ(m.sizes[0].failure, "rank 1 crashed; log rank1.log");
}

std::string reply_with(const std::string& code) { return "Here it is.\n```cuda\n" + code + "```\n"; }

// Turn 1 does not compile; turn 2 includes turn 1's file from the sandbox, so nvcc names
// that file by its folder (the sandbox, under $HOME); turns 3 and 4 send one good kernel
// twice. The model must never read a host path, and must hear that turn 4 repeats turn 3.
TEST(HostPathsSession, TheStoredConversationHoldsNoSandboxCacheOrHomePathAndSaysWhatIsUnchanged) {
  test::TempDir dir("mgk-host-paths");
  const fs::path home = dir.path() / "user";
  const fs::path mgk_home = home / ".cache/mgk";
  fs::create_directories(mgk_home);
  std::ofstream(dir.path() / "config.json") << R"({"prices": {"gpt-test": {"input": 2, "output": 8}}})";
  const std::map<std::string, std::string> env = {{"HOME", home.string()},
                                                  {"MGK_HOME", mgk_home.string()},
                                                  {"MGK_DB", (dir.path() / "mgk.db").string()},
                                                  {"MGK_CONFIG", (dir.path() / "config.json").string()},
                                                  {"OPENAI_API_KEY", "sk-test-host-paths"}};
  const std::string broken = "#include \"mgk/solution.h\"\nMGK_EXPORT int mgk_setup(mgk_ctx*) { return 0 }\n";
  const std::string includes_turn1 = "#include \"kernel_turn1.cu\"\n";
  const std::string good = "#include \"mgk/solution.h\"\nMGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }\n"
                           "MGK_EXPORT void mgk_teardown(mgk_ctx*) {}\nMGK_EXPORT int mgk_run(mgk_ctx*, const "
                           "mgk_tensor*, int, const mgk_tensor*, int, cudaStream_t) { return 0; }\n";
  test::ScriptedServer server;
  for (const std::string* code : {&broken, &includes_turn1, &good, &good})
    server.push(test::ScriptedResponse::json(200, test::openai_chat_reply(reply_with(*code))));
  auto with_url = env;
  with_url["OPENAI_BASE_URL"] = server.url() + "/v1";
  const test::CliResult r = test::run_mgk(
      {"generate", "--problem", "collectives/all_reduce", "--model", "openai:gpt-test", "--turns", "4", "--compile-only"},
      with_url);
  EXPECT_EQ(r.exit_code, 0) << r.output;  // --compile-only: a kernel compiled, as eval --compile-only
  EXPECT_NE(r.output.find("(unchanged from turn 3)"), std::string::npos) << r.output;

  store::Store store = store::Store::open(dir.path() / "mgk.db");
  const std::vector<store::TurnRecord> turns = store.turns(1);
  ASSERT_EQ(turns.size(), 4u) << r.output;
  std::string conversation;
  for (const auto& t : turns) conversation += t.messages.dump() + "\n" + t.reply + "\n" + t.feedback + "\n";
  EXPECT_EQ(conversation.find(mgk_home.string()), std::string::npos) << "the cache or the sandbox:\n" << conversation;
  EXPECT_EQ(conversation.find("sandboxes/"), std::string::npos) << conversation;
  EXPECT_EQ(conversation.find(home.string()), std::string::npos) << "$HOME:\n" << conversation;
  // What the compiler said is still there, named as the model knows the files.
  EXPECT_NE(turns[0].feedback.find("kernel.cu(2): error"), std::string::npos) << turns[0].feedback;
  EXPECT_NE(turns[1].feedback.find("kernel_turn1.cu(2): error"), std::string::npos) << turns[1].feedback;
  EXPECT_EQ(turns[2].feedback.find("Unchanged"), std::string::npos) << turns[2].feedback;
  EXPECT_EQ(turns[3].feedback.rfind("Unchanged from turn 3: ", 0), 0u) << turns[3].feedback;
  EXPECT_NE(turns[3].feedback.find("(its build was reused)"), std::string::npos) << turns[3].feedback;
  ASSERT_TRUE(turns[3].kernel_hash && turns[2].kernel_hash);
  EXPECT_EQ(*turns[3].kernel_hash, *turns[2].kernel_hash);
}

}  // namespace
}  // namespace mgk::agent
