// `mgk tune` as a user runs it: the built binary, a real store file.
#include <gtest/gtest.h>

#include <fstream>

#include "store/store.h"
#include "support/mgk_cli.h"
#include "support/test_paths.h"
#include "tune/markers.h"
#include "tune/store_trial_cache.h"
#include "tune/tune_kernel.h"

namespace mgk::tune {
namespace {

const char* kProblem = "collectives/all_reduce";

std::filesystem::path write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

Trial stored(const std::string& hash, const std::string& params, TrialStatus status, double us) {
  Trial t;
  t.key.context = TrialContext{hash, kProblem, "medium", 2, "NVIDIA H200", "13000"};
  t.key.params = params;
  t.status = status;
  t.time_us = us;
  t.message = status == TrialStatus::kOk ? "" : "k.cu(9): error: too many blocks";
  return t;
}

TEST(TuneCli, ShowListsTheStoredTrialsOfThisKernelBestFirst) {
  mgk::test::TempDir dir;
  const auto kernel = write(dir.path() / "k.cu",
                            "// mgk:tune BLOCKS 8 16 32\n#ifndef BLOCKS\n#define BLOCKS 8\n#endif\n");
  const auto db = dir.path() / "mgk.db";
  {
    store::Store s = store::Store::open(db);
    StoreTrialCache cache(s);
    const std::string hash = identify_kernel(kernel).kernel_hash;
    cache.record(stored(hash, R"({"BLOCKS":8})", TrialStatus::kOk, 52.5));
    cache.record(stored(hash, R"({"BLOCKS":32})", TrialStatus::kCompile, 0));
    cache.record(stored(hash, R"({"BLOCKS":16})", TrialStatus::kOk, 41.25));
    cache.record(stored("another-kernel", R"({"BLOCKS":16})", TrialStatus::kOk, 1.0));
  }
  auto r = mgk::test::run_mgk({"--db", db.string(), "tune", kProblem, kernel.string(), "--show"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t first = r.output.find("41.25"), second = r.output.find("52.50"),
               third = r.output.find("compile");
  ASSERT_NE(first, std::string::npos) << r.output;
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);
  EXPECT_NE(r.output.find("BLOCKS=16"), std::string::npos);
  EXPECT_EQ(r.output.find("1.00"), std::string::npos) << "another kernel's trial is listed";

  auto j = mgk::test::run_mgk(
      {"--db", db.string(), "tune", kProblem, kernel.string(), "--show", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.output;
  nlohmann::json list = nlohmann::json::parse(j.output.substr(j.output.find('[')));
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0]["params"]["BLOCKS"], 16);
  EXPECT_EQ(list[0]["time_us"], 41.25);
  EXPECT_EQ(list[2]["status"], "compile");

  { store::Store::open(dir.path() / "empty.db"); }
  auto none = mgk::test::run_mgk({"--db", (dir.path() / "empty.db").string(), "tune", kProblem,
                                  kernel.string(), "--show"});
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_NE(none.output.find("no tuning results for"), std::string::npos) << none.output;
  // --show only reads: a store that is not there is not created, and the exit says so.
  auto missing = mgk::test::run_mgk({"--db", (dir.path() / "missing.db").string(), "tune", kProblem,
                                     kernel.string(), "--show"});
  EXPECT_EQ(missing.exit_code, 5) << missing.output;
  EXPECT_NE(missing.output.find("no mgk store at"), std::string::npos) << missing.output;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "missing.db"));
}

TEST(TuneCli, UsageErrorsExitWith64AndSayWhatToFix) {
  mgk::test::TempDir dir;
  const auto db = (dir.path() / "mgk.db").string();
  const auto plain = write(dir.path() / "plain.cu", "__global__ void k() {}\n").string();
  const auto bad = write(dir.path() / "bad.cu", "// a kernel\n// mgk:tune BLOCKS 8 x-y\n").string();
  const auto good = write(dir.path() / "good.cu", "// mgk:tune BLOCKS 8 16\n").string();
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"tune", kProblem, plain}, "declares no tunable parameters"},
      {{"tune", kProblem, bad}, "bad.cu:2: mgk:tune BLOCKS: 'x-y' is not a number or an identifier"},
      {{"tune", kProblem, good, "--strategy", "anneal"}, "choose one of auto, exhaustive"},
      {{"tune", kProblem, good, "--size", "huge"}, "no size preset 'huge'"},
      {{"tune", "collectives/nope", good}, "collectives/nope"},
      {{"tune", kProblem, (dir.path() / "missing.cu").string()}, "cannot read kernel file"},
      {{"tune", kProblem, good, "--max-evals", "0"}, "--max-evals: must be a number of at least 1, not '0'"},
      {{"tune", kProblem, good, "--max-evals", "-3"}, "--max-evals: must be a number of at least 1, not '-3'"},
      {{"tune", kProblem, good, "--timeout", "nan"}, "--timeout: must be a number above 0, not 'nan'"},
      {{"tune", kProblem, good, "--gpus", "0,1", "--world", "3"}, "--world 3 does not match --gpus"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"--db", db};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = mgk::test::run_mgk(args);
    SCOPED_TRACE(r.output);
    EXPECT_EQ(r.exit_code, 64);
    EXPECT_NE(r.output.find(c.expected), std::string::npos);
  }
  // Refused before its first trial, a tuning leaves no run behind (none failed, none running).
  if (std::filesystem::exists(db)) EXPECT_TRUE(store::Store::open_read_only(db).runs_of_kind("tune").empty());
}

// On a GPU machine: a short real search over the expert all-reduce's parameters, resumed
// from the store, and the written kernel judged correct by `mgk eval`.
TEST(TuneCli, TunesAKernelOnTheGpusResumesAndWritesAKernelThatEvaluates) {
  int gpus = 0;
  if (!mgk::test::gpus_available(&gpus) || gpus < 2) GTEST_SKIP() << "needs 2 GPUs";
  mgk::test::TempDir dir;
  const auto db = (dir.path() / "mgk.db").string();
  const auto kernel = dir.path() / "ar.cu";
  std::filesystem::copy_file(std::filesystem::path(MGK_SOURCE_ROOT) / "problems" / kProblem /
                                 "expert.cu", kernel);
  const auto out = (dir.path() / "best.cu").string();
  const std::vector<std::string> args = {"--db", db, "tune", kProblem, kernel.string(),
                                         "--world", "2", "--size", "small", "--strategy",
                                         "random", "--max-evals", "4", "--out", out, "--json"};
  auto first = mgk::test::run_mgk(args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  nlohmann::json j = first.json();
  EXPECT_EQ(j["measured"], 4);
  ASSERT_TRUE(j["best"].is_object()) << first.output;
  EXPECT_GT(j["best"]["time_us"].get<double>(), 0);
  ASSERT_TRUE(std::filesystem::exists(out));

  auto second = mgk::test::run_mgk(args);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(second.json()["measured"], 0);
  EXPECT_EQ(second.json()["from_cache"], 4);

  auto check = mgk::test::run_mgk({"--db", db, "eval", kProblem, out, "--world", "2"});
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

}  // namespace
}  // namespace mgk::tune
