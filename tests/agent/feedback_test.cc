#include "agent/feedback.h"

#include <gtest/gtest.h>

namespace mgk::agent {
namespace {

eval::SizeResult timed(const std::string& size, double ref_us, double cand_us) {
  eval::SizeResult s;
  s.size = size;
  s.correct = true;
  s.trials_passed = 3;
  s.reference = eval::Timing{ref_us, ref_us, ref_us, ref_us, 100, {ref_us, ref_us}};
  s.candidate = eval::Timing{cand_us, cand_us, cand_us, cand_us, 100, {cand_us, cand_us * 1.1}};
  s.speedup = ref_us / cand_us;
  s.roofline_us = cand_us / 2;
  s.roofline_fraction = 0.5;
  s.roofline_bound = "link";
  s.floor = eval::Timing{4.25, 4.0, 4.5, 3.9, 100, {4.2, 4.25}};
  return s;
}

eval::EvalResult correct(std::vector<eval::SizeResult> sizes) {
  eval::EvalResult r;
  r.verdict = eval::Verdict::kCorrect;
  r.sizes = std::move(sizes);
  return r;
}

TEST(Feedback, TheBestKernelIsJudgedByItsSlowestSize) {
  EXPECT_DOUBLE_EQ(*min_speedup(correct({timed("small", 20, 10), timed("large", 800, 1000)})), 0.8);
  eval::EvalResult wrong = correct({timed("small", 20, 10)});
  wrong.verdict = eval::Verdict::kIncorrect;
  EXPECT_FALSE(min_speedup(wrong));
  eval::SizeResult checked = timed("small", 20, 10);
  checked.candidate.reset();  // ranks sharing a GPU: checked, never timed
  checked.reference.reset();
  checked.speedup = 0;
  eval::EvalResult untimed = correct({checked});
  EXPECT_FALSE(agent::timed(untimed));
  EXPECT_FALSE(min_speedup(untimed)) << "not timed is not a speedup of 0";
  EXPECT_TRUE(agent::timed(correct({timed("small", 20, 10)})));
}

TEST(Feedback, TheVerdictChoosesTheTemplate) {
  EXPECT_EQ(feedback_template(correct({timed("small", 20, 10), timed("large", 800, 790)})),
            "feedback/correct_fast");
  EXPECT_EQ(feedback_template(correct({timed("small", 20, 10), timed("large", 800, 800)})),
            "feedback/correct_slow");  // not faster on every size
  eval::EvalResult r;
  r.verdict = eval::Verdict::kCompileError;
  EXPECT_EQ(feedback_template(r), "feedback/compile_error");
  r.verdict = eval::Verdict::kTimeout;
  EXPECT_EQ(feedback_template(r), "feedback/hang");
  r.verdict = eval::Verdict::kIncorrect;
  EXPECT_EQ(feedback_template(r), "feedback/mismatch");
  r.verdict = eval::Verdict::kRuntimeError;
  EXPECT_EQ(feedback_template(r), "feedback/runtime_error");
}

TEST(Feedback, TimingsBecomeAPerSizeTableAndPerRankTimes) {
  TemplateVars v = feedback_vars(correct({timed("small", 21.7, 10.85), timed("large", 888, 815)}), 2, 8);
  EXPECT_NE(v["size_table"].find("| small | 21.7 | 10.8 | 2.00× | 5.4 | 0.50 | link | 4.2 |"), std::string::npos)
      << v["size_table"];
  EXPECT_NE(v["size_table"].find("| large | 888.0 | 815.0 | 1.09×"), std::string::npos) << v["size_table"];
  EXPECT_EQ(v["min_speedup"], "1.09");
  EXPECT_NE(v["per_rank"].find("- small: rank 0 10.8, rank 1 11.9"), std::string::npos) << v["per_rank"];
  EXPECT_EQ(v["turn"], "2");
}

TEST(Feedback, AMismatchReportNamesTheSizeAndQuotesTheReport) {
  eval::EvalResult r;
  r.verdict = eval::Verdict::kIncorrect;
  r.message = "output y differs from the oracle";
  eval::SizeResult s;
  s.size = "small";
  s.failure = "y mismatched on rank 1";
  s.mismatch = R"({"output":"y","rank":1,"index":17,"got":0.0,"expected":1.25,"bound":0.02,"failures":3,"numel":1024,"nan":false})";
  r.sizes.push_back(s);
  TemplateVars v = feedback_vars(r, 1, 4);
  EXPECT_NE(v["report"].find("size small: y mismatched on rank 1"), std::string::npos) << v["report"];
  EXPECT_NE(v["report"].find("first wrong element: output `y`, rank 1, index 17: got 0.0, expected 1.25 "
                             "(allowed error 0.02); 3 of 1024 elements wrong"),
            std::string::npos)
      << v["report"];
  EXPECT_NE(v["report"].find(R"({"nan":false})"), std::string::npos) << v["report"];  // the rest, as given
  s.mismatch = "not json: y[3] = 7";
  r.sizes = {s};
  EXPECT_NE(feedback_vars(r, 1, 4)["report"].find("not json: y[3] = 7"), std::string::npos);
  EXPECT_EQ(verdict_summary(r), "incorrect");
  EXPECT_EQ(verdict_summary(correct({timed("small", 30, 20)})), "correct 1.50x");
}

}  // namespace
}  // namespace mgk::agent
