// One exit-code table for every command: the README's table is the source. The test reads
// it (the rows of "| code | meaning |" under "Exit codes, the same for every command"),
// runs each command in each situation below with the built mgk (no GPU needed), and
// expects the code the README gives that situation. A row the README drops, or a command
// that exits otherwise, fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "common/file.h"
#include "support/mgk_cli.h"
#include "support/scripted_server.h"
#include "support/test_paths.h"

namespace mgk::cli {
namespace {

// The README's table: the first word(s) of each meaning ("not found", "bad usage") -> code.
std::map<std::string, int> readme_exit_codes() {
  const std::string readme = read_file(test::source_dir() / "README.md");
  const size_t at = readme.find("Exit codes, the same for every command");
  EXPECT_NE(at, std::string::npos) << "the README has no exit-code table";
  std::map<std::string, int> codes;
  std::istringstream in(readme.substr(at));
  std::string line;
  const std::regex row(R"(^\| (\d+) \| ([a-z ]+?)(:|\s*\(| \|))");
  bool in_table = false;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, row)) {
      codes[m[2]] = std::stoi(m[1]);
      in_table = true;
    } else if (in_table && line.rfind("|", 0) != 0) {
      break;
    }
  }
  return codes;
}

struct Case {
  std::string situation;  // a meaning of the README's table
  std::vector<std::string> args;
};

class ExitCodes : public ::testing::Test {
 protected:
  std::map<std::string, std::string> env() {
    return {{"MGK_DB", (dir_.path() / "mgk.db").string()},
            {"MGK_HOME", (dir_.path() / "home").string()},
            {"MGK_CONFIG", (dir_.path() / "config.json").string()},
            {"OPENAI_API_KEY", "sk-test"},
            {"OPENAI_BASE_URL", server_.url() + "/v1"}};
  }
  test::TempDir dir_{"mgk-exit-codes"};
  test::ScriptedServer server_;
};

TEST_F(ExitCodes, TheReadmeTableHasEveryCode) {
  const auto codes = readme_exit_codes();
  const std::map<std::string, int> want = {{"ok", 0},      {"incorrect", 1}, {"timeout", 2},     {"infrastructure", 3},
                                           {"limit", 4},   {"not found", 5}, {"bad usage", 64}, {"interrupted", 130}};
  EXPECT_EQ(codes, want);
}

TEST_F(ExitCodes, EveryCommandExitsAsTheReadmeTableSays) {
  std::ofstream(dir_.path() / "config.json") << R"({"prices": {"gpt-test": {"input": 1, "output": 1}}})";
  const std::string kernel = (test::source_dir() / "problems/collectives/all_reduce/expert.cu").string();
  const std::string missing_db = (dir_.path() / "nosuch.db").string();
  const std::string into = (dir_.path() / "merged.db").string();
  const std::string plain = "```cuda\n#include \"mgk/solution.h\"\nMGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }\n"
                            "MGK_EXPORT void mgk_teardown(mgk_ctx*) {}\nMGK_EXPORT int mgk_run(mgk_ctx*, const "
                            "mgk_tensor*, int, const mgk_tensor*, int, cudaStream_t) { return 0; }\n```\n";
  server_.respond_with([&](const test::RecordedRequest&) {
    return test::ScriptedResponse::json(200, test::openai_chat_reply(plain));
  });
  const std::vector<Case> cases = {
      // ok: eval and generate with --compile-only, once a kernel compiled (run 1, run 2)
      {"ok", {"eval", "collectives/all_reduce", kernel, "--compile-only"}},
      {"ok", {"generate", "--problem", "collectives/all_reduce", "--model", "openai:gpt-test", "--turns", "1",
              "--compile-only"}},
      {"ok", {"history"}},
      {"ok", {"history", "--runs"}},
      {"ok", {"show", "--run", "1"}},
      {"ok", {"problems"}},
      // not found: an id, a calibration, or a store file that is not there
      {"not found", {"show", "999"}},
      {"not found", {"show", "--run", "999"}},
      {"not found", {"report", "999"}},
      {"not found", {"bench", "--resume", "999"}},
      {"not found", {"generate", "--resume", "999"}},
      {"not found", {"calibrate", "--show"}},
      {"not found", {"--db", missing_db, "history"}},
      {"not found", {"merge", missing_db, "--into", into}},
      // bad usage: the command line or an input is wrong
      {"bad usage", {"report", "1"}},  // an eval run
      {"bad usage", {"show"}},
      {"bad usage", {"bench"}},
      {"bad usage", {"generate"}},
      {"bad usage", {"eval", "collectives/all_reduce"}},
      {"bad usage", {"report", "--format", "pdf"}},
      {"bad usage", {"history", "--status", "bogus"}},
      {"bad usage", {"problems", "show", "collectives/nosuch"}},
      {"bad usage", {"merge"}},
      {"bad usage", {"tune"}},
      {"bad usage", {"nosuchcommand"}},
      {"bad usage", {"doctor", "--bogus"}},
      {"bad usage", {"bench", "--model", "openai:gpt-test", "--max-tokens", "0"}},
      {"bad usage", {"bench", "--model", "openai:gpt-unpriced", "--compile-only"}},
  };
  const auto codes = readme_exit_codes();
  for (const Case& c : cases) {
    std::string line;
    for (const auto& a : c.args) line += a + " ";
    SCOPED_TRACE("mgk " + line);
    ASSERT_TRUE(codes.count(c.situation)) << "the README's table has no '" << c.situation << "'";
    test::CliResult r = test::run_mgk(c.args, env());
    EXPECT_EQ(r.exit_code, codes.at(c.situation)) << c.situation << ": " << r.output;
    if (r.exit_code != 0) EXPECT_NE(r.output.find("mgk: error: "), std::string::npos) << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(into)) << "a failed merge leaves no --into";
}

}  // namespace
}  // namespace mgk::cli
