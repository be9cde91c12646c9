// --fail-under's thresholds: what they parse to, and which of a run's metrics meet them.
#include "report/fail_under.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "report/bench_report.h"
#include "report/bench_store.h"
#include "support/test_paths.h"

namespace mgk::report {
namespace {

using namespace test;
using results::Verdict;

TEST(FailUnder, ThresholdsParseAsFractionsOrPercentages) {
  const Threshold pass = parse_threshold("pass@1=0.5");
  EXPECT_EQ(pass.metric, Threshold::Metric::kPass);
  EXPECT_EQ(pass.k, 1);
  EXPECT_DOUBLE_EQ(pass.at_least, 0.5);
  const Threshold fast = parse_threshold("fast_1.5@2=25%");
  EXPECT_EQ(fast.metric, Threshold::Metric::kFast);
  EXPECT_DOUBLE_EQ(fast.p, 1.5);
  EXPECT_EQ(fast.k, 2);
  EXPECT_DOUBLE_EQ(fast.at_least, 0.25);
  EXPECT_EQ(parse_threshold("compiles@3=1").metric, Threshold::Metric::kCompiles);
  for (const char* bad : {"pass@1>0.5", "pass@0=0.5", "speed@1=2", "pass@1=", "pass@1=150%", "pass@1=1.5"})
    EXPECT_THROW(parse_threshold(bad), UsageError) << bad;
}

TEST(FailUnder, ARunUnderAThresholdOrWithItUnknownFailsIt) {
  mgk::test::TempDir dir{"mgk-fail-under"};
  store::Store s = store::Store::open(dir.path() / "mgk.db");
  const int64_t run = begin_bench_run(s, 1);
  record_attempt(s, run, "collectives/all_reduce", 0, {kernel_turn(register_kernel("a"), timed_correct(1.2, 1.4))});
  record_attempt(s, run, "tp/ag_gemm", 0, {kernel_turn("a(", verdict(Verdict::kCompileError))});
  record_attempt(s, run, "sp/x", 0, {kernel_turn(register_kernel("x"), shared_correct())});
  const RunMetrics m = build_report(s, run).metrics;  // pass@1 2/3, compiles@1 2/3, fast_1 unknown (not timed)
  EXPECT_TRUE(unmet(m, {parse_threshold("pass@1=0.6"), parse_threshold("compiles@1=66%")}).empty());
  EXPECT_EQ(unmet(m, {parse_threshold("pass@1=0.7")}), (std::vector<std::string>{"pass@1 is 66.7%, under 70.0%"}));
  EXPECT_EQ(unmet(m, {parse_threshold("fast_1@1=0.1")}),
            (std::vector<std::string>{"fast_1@1 is unknown: 1 problem(s) not timed"}));
  EXPECT_EQ(unmet(m, {parse_threshold("pass@2=0.1")}),
            (std::vector<std::string>{"pass@2 is unknown: no problem has 2 finished sample(s)"}));
  EXPECT_EQ(unmet(m, {parse_threshold("fast_3@1=0.1")}),
            (std::vector<std::string>{"fast_3@1 is not in the report (add --p 3)"}));
}

}  // namespace
}  // namespace mgk::report
