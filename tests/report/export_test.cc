// `mgk export RUN DIR` on a real SQLite store written through the Store API, run as a user
// runs it: every attempt's conversation and kernels, the evaluations and the report are
// files; it never overwrites, and an unknown run is a usage error.
#include <gtest/gtest.h>

#include <fstream>

#include "common/file.h"
#include "report/bench_store.h"
#include "report/export_run.h"
#include "support/mgk_cli.h"
#include "support/test_paths.h"

namespace mgk::report {
namespace {

namespace fs = std::filesystem;
using namespace test;
using results::Verdict;
using mgk::test::CliResult;
using mgk::test::run_mgk;

std::string text_of(const fs::path& p) { return read_file(p, "an exported file"); }

class Export : public ::testing::Test {
 protected:
  void SetUp() override {
    store::Store store = store::Store::open(db_);
    run_ = begin_bench_run(store, 1);
    record_attempt(store, run_, "collectives/all_reduce", 0,
                   {kernel_turn("int broken(", verdict(Verdict::kCompileError)),
                    kernel_turn(register_kernel("fast"), timed_correct(2.0, 1.8, 0.6))});
    record_attempt(store, run_, "tp/gemm_allreduce", 0, {kernel_turn("int x(", verdict(Verdict::kCompileError))});
  }
  mgk::test::TempDir dir_{"mgk-export"};
  fs::path db_ = dir_.path() / "mgk.db";
  int64_t run_ = 0;
};

TEST_F(Export, ARunBecomesConversationsKernelsEvaluationsAndItsReport) {
  const fs::path out = dir_.path() / "shared";
  CliResult r = run_mgk({"export", std::to_string(run_), out.string(), "--db", db_.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 attempt(s), 3 kernel(s)"), std::string::npos) << r.output;
  for (const char* f : {"README.md", "run.json", "evaluations.json", "report.md", "report.json", "report.html"})
    EXPECT_TRUE(fs::is_regular_file(out / f)) << f;
  std::vector<fs::path> attempts;
  for (const auto& e : fs::directory_iterator(out / "attempts")) attempts.push_back(e.path());
  std::sort(attempts.begin(), attempts.end());
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].filename().string().rfind("collectives__all_reduce-s0-a", 0), 0u) << attempts[0];
  const std::string md = text_of(attempts[0] / "conversation.md");
  EXPECT_NE(md.find("correct"), std::string::npos) << md;
  const nlohmann::json j = nlohmann::json::parse(text_of(attempts[0] / "attempt.json"));
  EXPECT_EQ(j["turns"].size(), 2u) << j.dump(2);
  EXPECT_EQ(j["evaluations"].size(), 2u);
  EXPECT_EQ(text_of(attempts[0] / "kernels" / (sha256_of(register_kernel("fast")) + ".cu")), register_kernel("fast"));
  EXPECT_EQ(nlohmann::json::parse(text_of(out / "evaluations.json")).size(), 3u);
  EXPECT_EQ(nlohmann::json::parse(text_of(out / "run.json"))["id"], run_);
  EXPECT_NE(text_of(out / "report.md").find("pass@k"), std::string::npos);
  for (const auto& e : fs::directory_iterator(dir_.path()))
    EXPECT_EQ(e.path().filename().string().find(".partial-"), std::string::npos) << "left behind: " << e.path();
}

TEST_F(Export, ItNeverOverwritesAndAnUnknownRunIsAUsageError) {
  const fs::path taken = dir_.path() / "taken";
  fs::create_directories(taken);
  std::ofstream(taken / "mine.txt") << "keep";
  CliResult r = run_mgk({"export", std::to_string(run_), taken.string(), "--db", db_.string()});
  EXPECT_EQ(r.exit_code, 64) << r.output;
  EXPECT_NE(r.output.find("exists and is not an empty folder"), std::string::npos) << r.output;
  EXPECT_EQ(text_of(taken / "mine.txt"), "keep");
  CliResult none = run_mgk({"export", "999", (dir_.path() / "new").string(), "--db", db_.string()});
  EXPECT_EQ(none.exit_code, 64) << none.output;
  EXPECT_NE(none.output.find("no run 999"), std::string::npos) << none.output;
  EXPECT_FALSE(fs::exists(dir_.path() / "new"));
  const fs::path empty = dir_.path() / "empty";
  fs::create_directories(empty);
  EXPECT_EQ(run_mgk({"export", std::to_string(run_), empty.string(), "--db", db_.string()}).exit_code, 0)
      << "an empty folder is taken";
  EXPECT_TRUE(fs::is_regular_file(empty / "run.json"));
}

}  // namespace
}  // namespace mgk::report
