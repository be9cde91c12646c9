#include "tune/tuning_text.h"

#include <gtest/gtest.h>

namespace mgk::tune {
namespace {

Trial trial(const std::string& params, TrialStatus status, double time_us,
            const std::string& message = "") {
  Trial t;
  t.key.context = TrialContext{"h", "p", "medium", 4, "NVIDIA H200", "580"};
  t.key.params = params;
  t.status = status;
  t.time_us = time_us;
  t.message = message;
  return t;
}

TEST(Report, TableListsOkTrialsFastestFirstThenFailures) {
  std::vector<Trial> trials = {
      trial(R"({"B":8,"M":"kTma"})", TrialStatus::kCompile, 0, "k.cu(3): error: bad"),
      trial(R"({"B":16,"M":"kTma"})", TrialStatus::kOk, 52.5),
      trial(R"({"B":32,"M":"kLdSt"})", TrialStatus::kIncorrect, 1.0, "out[7] got 0"),
      trial(R"({"B":64,"M":"kTma"})", TrialStatus::kOk, 41.25),
  };
  EXPECT_EQ(format_trials_table(trials),
            "#  time_us  status     configuration  message\n"
            "1  41.25    ok         B=64 M=kTma\n"
            "2  52.50    ok         B=16 M=kTma\n"
            "3  -        compile    B=8 M=kTma     k.cu(3): error: bad\n"
            "4  -        incorrect  B=32 M=kLdSt   out[7] got 0\n");
  EXPECT_EQ(format_trials_table(trials, 1),
            "#  time_us  status  configuration\n"
            "1  41.25    ok      B=64 M=kTma\n"
            "(3 more not shown)\n");
  const std::string with_context = format_trials_table(trials, 1, true);
  EXPECT_NE(with_context.find("size    world  gpu"), std::string::npos) << with_context;
  EXPECT_NE(with_context.find("medium  4      NVIDIA H200"), std::string::npos) << with_context;
}

TEST(Report, ProgressLines) {
  Trial ok = trial(R"({"B":16})", TrialStatus::kOk, 52.5);
  EXPECT_EQ(progress_line(ok, 3, 100), "[3/100] B=16: ok 52.50 us");
  Trial hang = trial(R"({"B":8})", TrialStatus::kHang, 0, "watchdog: rank 1 in run");
  hang.from_cache = true;
  EXPECT_EQ(progress_line(hang, 4, 100), "[4/100] B=8: hang: watchdog: rank 1 in run (cached)");
  EXPECT_EQ(describe_params(R"({"A":0.5,"M":"kTma"})"), "A=0.5 M=kTma");
}

}  // namespace
}  // namespace mgk::tune
