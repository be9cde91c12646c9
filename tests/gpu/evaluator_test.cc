// The evaluator on real GPUs (ctest label `gpu`; skipped where no GPU is visible).
// Every collective: the reference passes against itself, a plain hand-written candidate
// passes, the expert passes; every bad candidate is rejected for the right reason; a hang is
// killed in time with its phase named, and the GPUs work right after.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "gpu/collectives.h"
#include "support/mgk_cli.h"
#include "support/test_paths.h"

namespace mgk::test {
namespace {

class GpuEval : public ::testing::Test {
 protected:
  void SetUp() override { MGK_REQUIRE_GPUS(true); }
  // $MGK_TEST_WORLD runs the whole file at another world size (default 2).
  static int world() { return test_world(); }
  // Fast settings: two sizes (one with a ragged tail), two trials, a short timing run.
  CliResult eval(const std::string& problem, std::vector<std::string> extra, const std::string& sizes = "small,odd") {
    std::vector<std::string> args = {"eval", "collectives/" + problem, "--size", sizes, "--trials", "2",
                                     "--iterations", "20", "--json", "--no-store", "--world", std::to_string(world())};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_mgk(args, env());
  }
  std::map<std::string, std::string> env() {
    return {{"MGK_HOME", (build_dir() / "gpu-test-home").string()}};
  }
  std::string candidate(const std::string& name) { return (tests_dir() / "gpu/candidates" / (name + ".cu")).string(); }
  std::string bad(const std::string& name) { return (tests_dir() / "bad_candidates" / (name + ".cu")).string(); }
};

TEST_F(GpuEval, ReferencePassesAgainstItselfForEveryCollective) {
  for (const char* p : kCollectives) {
    SCOPED_TRACE(p);
    auto r = eval(p, {"--reference"});
    expect_verdict(r, "correct");
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
}

TEST_F(GpuEval, PlainCandidatePassesForEveryCollective) {
  for (const char* p : kCollectives) {
    SCOPED_TRACE(p);
    expect_verdict(eval(p, {candidate(p)}), "correct");
  }
}

TEST_F(GpuEval, PlainCandidatePassesInFp32) {
  expect_verdict(eval("all_reduce", {candidate("all_reduce"), "--dtype", "f32"}), "correct");
  expect_verdict(eval("reduce_scatter", {candidate("reduce_scatter"), "--dtype", "f32"}), "correct");
}

TEST_F(GpuEval, ExpertPassesForEveryCollective) {
  for (const char* p : kCollectives) {
    SCOPED_TRACE(p);
    ASSERT_TRUE(std::filesystem::exists(source_dir() / "problems/collectives" / p / "expert.cu")) << "no expert.cu for " << p;
    expect_verdict(eval(p, {"--expert"}), "correct");
  }
}

// Every timed size carries the timing floor (an empty kernel under the same protocol): a
// positive time that neither the reference nor the candidate can beat.
TEST_F(GpuEval, TimingFloorIsMeasuredAndBelowBothSolutions) {
  auto r = eval("all_reduce", {"--expert"}, "tiny,small");
  expect_verdict(r, "correct");
  auto j = r.json();
  ASSERT_TRUE(j.contains("sizes")) << r.output;
  for (const auto& s : j["sizes"]) {
    SCOPED_TRACE(s.value("size", ""));
    ASSERT_FALSE(s["floor"].is_null()) << r.output;
    const double floor = s["floor"]["median_us"].get<double>();
    EXPECT_GT(floor, 0.5) << "an empty kernel between two events on a GPU takes microseconds";
    EXPECT_LT(floor, s["candidate"]["median_us"].get<double>());
    EXPECT_LT(floor, s["reference"]["median_us"].get<double>());
  }
}

// The experts' other code paths, forced with their tuning knobs at every size: the
// large-message paths, the flagged and the Lamport one-shot (its escape path on every
// vector), TMA bulk copies, and the copy engine.
TEST_F(GpuEval, ExpertVariantsPass) {
  for (const auto& [problem, defines] : kExpertVariants) {
    SCOPED_TRACE(variant_label(problem, defines));
    expect_verdict(eval(problem, expert_variant_args(defines), "small,medium,odd"), "correct");
  }
}

// Every bad candidate, each for its reason (tests/gpu/collectives.h has the table).
TEST_F(GpuEval, EveryBadCandidateIsRejectedForItsReason) {
  for (const auto& b : kBadCandidates) {
    SCOPED_TRACE(b.file);
    std::vector<std::string> extra = {bad(b.file)};
    if (std::string(b.verdict) == "timeout") extra.insert(extra.end(), {"--timeout", "10"});
    CliResult r = eval("all_reduce", extra, b.sizes);
    if (std::string(b.verdict) == "incorrect") expect_verdict(r, "incorrect", b.failure_kind, b.part);
    else {
      expect_verdict(r, b.verdict);
      expect_message(r, b.part);
    }
    print_verdict(b.file, r);
  }
}

TEST_F(GpuEval, OneRankUnwrittenIsBlamedOnRankOne) {
  auto j = eval("all_reduce", {bad("one_rank_unwritten")}).json();
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["sizes"].back()["mismatch"]["rank"], 1);
  EXPECT_TRUE(j["sizes"].back()["mismatch"]["got"].is_null()) << "got NaN (the poison)";
}

TEST_F(GpuEval, MissingStartSyncShowsOnlyInBackToBackCalls) {
  auto without = eval("all_reduce", {bad("no_start_sync"), "--back-to-back", "0", "--no-time"});
  expect_verdict(without, "correct");  // the flaw only shows when calls are not aligned
}

// Counting calls no longer tells a checked timed call from an unchecked one.
TEST_F(GpuEval, SkippingWorkInPredictedUncheckedCallsIsCaught) {
  // mgk eval's own defaults (3 trials, 100 timed calls): the ones the kernel counts on.
  auto r = run_mgk({"eval", "collectives/all_reduce", bad("skips_unchecked"), "--size", "small", "--json", "--no-store",
                    "--world", std::to_string(world())},
                   env());
  expect_verdict(r, "incorrect", "mismatch", "in timed call");
}

TEST_F(GpuEval, HangIsKilledInTimeWithPhaseNamedAndGpusStayUsable) {
  auto r = eval("all_reduce", {bad("hang"), "--timeout", "10"});
  expect_verdict(r, "timeout");
  expect_message(r, "candidate trial 1/2 at size small");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_LT(r.seconds, 30.0) << r.output;
  // Right after: the same GPUs evaluate a correct kernel.
  expect_verdict(eval("all_reduce", {candidate("all_reduce")}), "correct");
}

}  // namespace
}  // namespace mgk::test
