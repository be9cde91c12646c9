// The subcommands as a user runs them (the built mgk binary, real files, no GPU needed):
// option checks, where the store and the cache live, --json, the problems list.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>

#include "common/env.h"
#include "common/file.h"
#include "common/hash.h"
#include "store/store.h"
#include "support/mgk_cli.h"
#include "support/test_paths.h"

namespace mgk::cli {
namespace {

using mgk::test::CliResult;
using mgk::test::run_mgk;

class Commands : public ::testing::Test {
 protected:
  // A clean environment: no MGK_DB / MGK_HOME (empty counts as unset), XDG folders here.
  std::map<std::string, std::string> env() {
    return {{"MGK_DB", ""},
            {"MGK_HOME", ""},
            {"XDG_DATA_HOME", (dir_.path() / "data").string()},
            {"XDG_CACHE_HOME", (dir_.path() / "cache").string()},
            {"OPENAI_API_KEY", "sk-unused"}};
  }
  std::filesystem::path kernel() const { return mgk::test::tests_dir() / "gpu/candidates/all_reduce.cu"; }
  mgk::test::TempDir dir_{"mgk-commands"};
};

TEST_F(Commands, EachBadNumberIsOneErrorNamingItsOption) {
  const std::string k = kernel().string();
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"eval", "collectives/all_reduce", k, "--timeout", "-5"}, "--timeout: must be a number above 0, not '-5'"},
      {{"eval", "collectives/all_reduce", k, "--timeout", "nan"}, "--timeout: must be a number above 0, not 'nan'"},
      {{"eval", "collectives/all_reduce", k, "--iterations", "-3"},
       "--iterations: must be a number of at least 1, not '-3'"},
      {{"eval", "collectives/all_reduce", k, "--gpus", "0,1", "--world", "3"},
       "--world 3 does not match --gpus, which names 2 GPU(s)"},
      {{"generate", "--problem", "collectives/all_reduce", "--model", "openai:gpt-4o", "--max-tokens", "0"},
       "--max-tokens: must be a number of at least 1, not '0'"},
      {{"generate", "--problem", "collectives/all_reduce", "--model", "openai:gpt-4o", "--max-cost", "-1"},
       "--max-cost: must be a number of at least 0, not '-1'"},
      {{"generate", "--problem", "collectives/all_reduce", "--model", "openai:gpt-4o", "--command-timeout", "-5"},
       "--command-timeout: must be a number above 0, not '-5'"},
  };
  for (const auto& c : cases) {
    CliResult r = run_mgk(c.args, env());
    SCOPED_TRACE(r.output);
    EXPECT_EQ(r.exit_code, 64);
    EXPECT_EQ(r.output.find("mgk: error: " + c.expected), 0u);
  }
}

TEST_F(Commands, EvalChecksTheStoreBeforeEvaluating) {
  auto env_bad_db = env();
  env_bad_db["MGK_DB"] = (dir_.path() / "no/such/folder/mgk.db").string();
  CliResult r = run_mgk({"eval", "collectives/all_reduce", kernel().string(), "--compile-only"}, env_bad_db);
  EXPECT_EQ(r.exit_code, 64) << r.output;
  EXPECT_NE(r.output.find("cannot create the mgk store"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("verdict"), std::string::npos) << "it evaluated before checking the store";
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "cache/mgk/cache")) << "it compiled";
}

// The store and the compile cache follow XDG, not the working directory; `kernel_hash`
// means the SHA-256 of the kernel source in what eval prints and what it stores.
TEST_F(Commands, EvalUsesTheXdgFoldersAndNamesTheSourceHashKernelHash) {
  CliResult r = run_mgk({"eval", "collectives/all_reduce", kernel().string(), "--compile-only", "--json"}, env());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string source_hash = sha256_hex(read_file(kernel()));
  nlohmann::json printed = r.json();
  ASSERT_FALSE(printed.is_null()) << r.output;
  EXPECT_EQ(printed["verdict"], "compiled");
  EXPECT_EQ(printed["kernel_hash"], source_hash);
  ASSERT_TRUE(printed.contains("build_key"));
  EXPECT_NE(printed["build_key"], source_hash);  // the compile-cache key is another thing
  const std::string key = printed["build_key"];
  EXPECT_TRUE(std::filesystem::exists(dir_.path() / "cache/mgk/cache" / key.substr(0, 2) / key / "kernel.so"));

  const auto db = dir_.path() / "data/mgk/mgk.db";
  ASSERT_TRUE(std::filesystem::exists(db));
  store::Store s = store::Store::open_read_only(db);
  auto runs = s.runs_without_attempts({});
  ASSERT_EQ(runs.size(), 1u);
  auto evaluations = s.evaluations_of_run(runs[0].id);
  ASSERT_EQ(evaluations.size(), 1u);
  EXPECT_EQ(evaluations[0].kernel_hash, source_hash);
  EXPECT_EQ(evaluations[0].result.kernel_hash, source_hash);
  EXPECT_EQ(evaluations[0].result.build_key, key);
  EXPECT_EQ(s.kernel_source(source_hash), read_file(kernel()));
}

TEST_F(Commands, DoctorSpeaksJsonAndNamesTheDefaultStore) {
  CliResult r = run_mgk({"doctor", "--json"}, env());
  nlohmann::json j = r.json();
  ASSERT_FALSE(j.is_null()) << r.output;
  ASSERT_TRUE(j["checks"].is_array());
  int failures = 0;
  bool store_named = false;
  for (const auto& c : j["checks"]) {
    failures += c["status"] == "fail";
    if (c["what"] == "store: " + (dir_.path() / "data/mgk/mgk.db").string()) store_named = c["status"] == "ok";
  }
  EXPECT_EQ(j["failures"], failures);
  EXPECT_TRUE(store_named) << r.output;
  EXPECT_EQ(r.exit_code, failures ? 3 : 0);
  // Every check has a stable name, each once: scripts find a check by it, not by its text.
  std::set<std::string> names;
  const std::regex stable(R"(nvcc|harness|suite|gpus|gpu\.\d+|cuda|peer\.\d+-\d+|gpu_count|nvls|cuda_visible_devices|store|)"
                          R"(calibration|sandbox|api_key\.[a-z]+|config)");
  for (const auto& c : j["checks"]) {
    ASSERT_TRUE(c.contains("name")) << c.dump();
    const std::string name = c["name"];
    EXPECT_TRUE(std::regex_match(name, stable)) << name;
    EXPECT_TRUE(names.insert(name).second) << name << " twice";
  }
  for (const char* always : {"nvcc", "harness", "suite", "nvls", "store", "sandbox", "api_key.openai"})
    EXPECT_TRUE(names.count(always)) << always << "\n" << r.output;
}

TEST_F(Commands, ProblemsShowSpeaksJson) {
  CliResult r = run_mgk({"problems", "show", "collectives/all_reduce", "--json", "--world", "4"}, env());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = r.json();
  ASSERT_FALSE(j.is_null()) << r.output;
  EXPECT_EQ(j["name"], "collectives/all_reduce");
  EXPECT_EQ(j["world"], 4);
  ASSERT_FALSE(j["sizes"].empty());
  ASSERT_EQ(j["sizes"][0]["ranks"].size(), 4u);  // every rank
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(j["sizes"][0]["ranks"][rank]["rank"], rank);
  EXPECT_FALSE(j["sizes"][0]["ranks"][0]["inputs"].empty());
}

// At W = 8 every rank is listed, in the text too; a problem that starts at 4 ranks is shown
// at 4 unless asked otherwise, and a world outside its range is refused.
TEST_F(Commands, ProblemsShowListsEveryRankAtTheProblemsSmallestWorldByDefault) {
  CliResult eight = run_mgk({"problems", "show", "collectives/all_reduce", "--world", "8"}, env());
  ASSERT_EQ(eight.exit_code, 0) << eight.output;
  for (int rank = 0; rank < 8; ++rank)
    EXPECT_NE(eight.output.find("  rank " + std::to_string(rank) + ":"), std::string::npos) << rank << eight.output;
  CliResult narrow = run_mgk({"problems", "show", "moe/moe_ep_narrow", "--json"}, env());
  ASSERT_EQ(narrow.exit_code, 0) << narrow.output;
  EXPECT_EQ(narrow.json()["world"], 4);
  EXPECT_EQ(narrow.json()["sizes"][0]["ranks"].size(), 4u);
  CliResult text = run_mgk({"problems", "show", "moe/moe_ep_narrow"}, env());
  EXPECT_NE(text.output.find("at W=4:"), std::string::npos) << text.output;
  CliResult two = run_mgk({"problems", "show", "moe/moe_ep_narrow", "--world", "2"}, env());
  EXPECT_EQ(two.exit_code, 64) << two.output;
  EXPECT_NE(two.output.find("moe/moe_ep_narrow runs at 4..72 ranks, not --world 2"), std::string::npos) << two.output;
}

TEST_F(Commands, ProblemsShowSaysWhatTheDimsMustMeet) {
  CliResult text = run_mgk({"problems", "show", "moe/moe_ep_balanced"}, env());
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("requires K <= E (each token picks K distinct experts)"), std::string::npos) << text.output;
  CliResult j = run_mgk({"problems", "show", "moe/moe_ep_balanced", "--json"}, env());
  ASSERT_EQ(j.exit_code, 0) << j.output;
  EXPECT_EQ(j.json()["requires"], nlohmann::json::parse(R"([{"expr": "K <= E", "why": "each token picks K distinct experts"}])"));
}

// A copy of the suite with one problem.json broken.
TEST_F(Commands, OneBrokenProblemIsNamedAndTheRestAreListedInColumns) {
  const auto root = dir_.path() / "root";
  std::filesystem::create_directories(root);
  std::filesystem::copy(root_dir() / "problems", root / "problems", std::filesystem::copy_options::recursive);
  std::ofstream(root / "problems/collectives/broadcast/problem.json") << "{ not json";
  auto e = env();
  e["MGK_ROOT"] = root.string();
  CliResult r = run_mgk({"problems"}, e);
  EXPECT_EQ(r.exit_code, 64) << r.output;
  EXPECT_NE(r.output.find("collectives/all_reduce"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("mgk: error: problem collectives/broadcast could not be read: "), std::string::npos)
      << r.output;
  // One table grouped by category, each group under its name and count; columns: every
  // cell is followed by at least two spaces, however long the names.
  EXPECT_NE(r.output.find("\ncollectives (7)\n"), std::string::npos) << r.output;
  std::istringstream lines(r.output);
  std::string header;
  std::getline(lines, header);
  const size_t title_at = header.find("title");
  ASSERT_NE(title_at, std::string::npos) << r.output;
  EXPECT_NE(header.find("dtypes"), std::string::npos) << header;
  int rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find('/') == std::string::npos || line.find(' ') < line.find('/')) continue;  // not a problem's row
    ++rows;
    EXPECT_EQ(line.substr(title_at - 2, 2), "  ") << line;
    EXPECT_NE(line[title_at], ' ') << line;
  }
  EXPECT_GE(rows, 7) << r.output;
}

TEST_F(Commands, CalibrateShowReadsTheStoreWithoutAGpu) {
  const auto db = dir_.path() / "data/mgk/mgk.db";
  std::filesystem::create_directories(db.parent_path());
  {
    store::Store s = store::Store::open(db);
    s.record_calibration({"NVIDIA H200", 2, "13000"},
                         {{"gpus", {{{"gpu", 0}, {"name", "NVIDIA H200"}, {"hbm_bytes_per_s", 4.2e12},
                                     {"bf16_flops_per_s", 7.5e14}}}},
                          {"pairs", nlohmann::json::array()}});
  }
  CliResult r = run_mgk({"calibrate", "--show"}, env());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 x NVIDIA H200, CUDA driver 13.0:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GPU 0 NVIDIA H200: HBM 4200 GB/s"), std::string::npos) << r.output;

  auto empty_env = env();
  empty_env["MGK_DB"] = (dir_.path() / "empty.db").string();
  { store::Store::open(dir_.path() / "empty.db"); }
  CliResult none = run_mgk({"calibrate", "--show"}, empty_env);
  EXPECT_EQ(none.exit_code, 5) << none.output;  // nothing to show, not a bad command line
  EXPECT_NE(none.output.find("no calibration stored in"), std::string::npos) << none.output;
}

// --version names the commit the binary was built from (a checkout with uncommitted changes
// is "-dirty"), so a result can be traced to its source; the tests build from a checkout.
TEST_F(Commands, VersionNamesTheGitCommit) {
  CliResult r = run_mgk({"--version"}, env());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(^mgk \S+ \(commit ([0-9a-f]{12})(-dirty)?\)\n$)")))
      << r.output;
}

// An eval run's stored args say what was evaluated, so it can be run again from anywhere:
// the kernel's absolute path, the sizes, the dtype and --compile-only.
TEST_F(Commands, AnEvalRunStoresTheKernelsAbsolutePathAndTheOptionsThatShapeIt) {
  const auto copy = dir_.path() / "kernel.cu";  // the expert includes only the primitives
  std::filesystem::copy_file(mgk::test::source_dir() / "problems/collectives/all_reduce/expert.cu", copy);
  auto e = env();
  e["MGK_DB"] = (dir_.path() / "eval.db").string();
  const std::string relative = std::filesystem::relative(copy).string();  // mgk runs in this directory
  ASSERT_NE(relative.front(), '/');
  CliResult r = run_mgk({"eval", "collectives/all_reduce", relative, "--compile-only", "--size", "small,odd",
                         "--dtype", "f32"},
                        e);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  store::Store s = store::Store::open_read_only(dir_.path() / "eval.db");
  const nlohmann::json args = s.runs_of_kind("eval").at(0).args;
  EXPECT_EQ(args["kernel"], std::filesystem::absolute(copy).lexically_normal().string());
  EXPECT_EQ(args["size"], (std::vector<std::string>{"small", "odd"}));
  EXPECT_EQ(args["dtype"], "f32");
  EXPECT_EQ(args["compile_only"], true);
}

}  // namespace
}  // namespace mgk::cli
