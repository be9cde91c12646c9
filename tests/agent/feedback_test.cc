#include "agent/feedback.h"

#include <gtest/gtest.h>

#include "common/env.h"

namespace mgk::agent {
namespace {

// The lines and cells are prompts/feedback/pieces/: the feedback is read as the model reads it.
TemplateVars feedback_vars(const results::EvalResult& r, int turn, int max_turns) {
  static const PromptLibrary prompts = PromptLibrary::load(root_dir() / "prompts");
  return agent::feedback_vars(prompts, r, turn, max_turns);
}

results::SizeResult timed(const std::string& size, double ref_us, double cand_us) {
  results::SizeResult s;
  s.size = size;
  s.correct = true;
  s.trials_passed = 3;
  s.reference = results::Timing{ref_us, ref_us, ref_us, ref_us, 100, {ref_us, ref_us}};
  s.candidate = results::Timing{cand_us, cand_us, cand_us, cand_us, 100, {cand_us, cand_us * 1.1}};
  s.speedup = ref_us / cand_us;
  s.roofline_us = cand_us / 2;
  s.roofline_fraction = 0.5;
  s.roofline_bound = "link";
  s.floor = results::Timing{4.25, 4.0, 4.5, 3.9, 100, {4.2, 4.25}};
  return s;
}

results::EvalResult correct(std::vector<results::SizeResult> sizes) {
  results::EvalResult r;
  r.verdict = results::Verdict::kCorrect;
  r.sizes = std::move(sizes);
  return r;
}

TEST(Feedback, ATimeThatIsNotCredibleIsToldSoAndCreditsNoSpeedup) {
  results::SizeResult under = timed("small", 20, 2);
  under.credible = false;
  under.not_credible = "the measured time (2.00 us) is below the timing floor (an empty kernel, 4.25 us)";
  under.speedup = 0;
  const results::EvalResult r = correct({under, timed("large", 800, 790)});
  EXPECT_EQ(feedback_template(r), "feedback/correct_not_credible");
  TemplateVars v = feedback_vars(r, 1, 4);
  EXPECT_EQ(v["min_speedup"], "-") << "no speedup, not 0";
  EXPECT_NE(v["not_credible"].find("- small: the measured time (2.00 us) is below the timing floor"), std::string::npos)
      << v["not_credible"];
  EXPECT_NE(v["size_table"].find("| small | 20.0 | 2.0 | not credible |"), std::string::npos) << v["size_table"];
  EXPECT_EQ(verdict_summary(r), "correct (time not credible: no speedup)");
}

TEST(Feedback, TheVerdictChoosesTheTemplate) {
  EXPECT_EQ(feedback_template(correct({timed("small", 20, 10), timed("large", 800, 790)})),
            "feedback/correct_fast");
  EXPECT_EQ(feedback_template(correct({timed("small", 20, 10), timed("large", 800, 800)})),
            "feedback/correct_slow");  // not faster on every size
  results::EvalResult r;
  r.verdict = results::Verdict::kCompileError;
  EXPECT_EQ(feedback_template(r), "feedback/compile_error");
  r.verdict = results::Verdict::kTimeout;
  EXPECT_EQ(feedback_template(r), "feedback/hang");
  r.verdict = results::Verdict::kIncorrect;
  EXPECT_EQ(feedback_template(r), "feedback/mismatch");
  r.verdict = results::Verdict::kRuntimeError;
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
  results::EvalResult r;
  r.verdict = results::Verdict::kIncorrect;
  r.message = "output y differs from the oracle";
  results::SizeResult s;
  s.size = "small";
  s.failure = "y mismatched on rank 1";
  s.mismatch = wire::Mismatch{"y", 1, "[17]", 17, 0.0, 1.25, 0.02, 3, 1024};
  r.sizes.push_back(s);
  TemplateVars v = feedback_vars(r, 1, 4);
  EXPECT_NE(v["report"].find("size small: y mismatched on rank 1"), std::string::npos) << v["report"];
  EXPECT_NE(v["report"].find("first wrong element: output 'y' rank 1 index [17]: got 0.0, expected 1.25 "
                             "(allowed error 0.02); 3 of 1024 elements wrong"),
            std::string::npos)
      << v["report"];
  EXPECT_EQ(verdict_summary(r), "incorrect");
  EXPECT_EQ(verdict_summary(correct({timed("small", 30, 20)})), "correct 1.50x");
}

}  // namespace
}  // namespace mgk::agent
