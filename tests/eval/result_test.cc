#include "results/eval_result.h"

#include <gtest/gtest.h>

#include <regex>

#include "eval/evaluation_text.h"

namespace mgk::eval {
namespace {

using namespace mgk::results;

EvalResult sample() {
  EvalResult r;
  r.verdict = Verdict::kIncorrect;
  r.message = "incorrect at size odd: output mismatch";
  r.problem = "collectives/all_reduce";
  r.world_size = 2;
  r.gpus = {0, 1};
  r.kernel_hash = "abc123";
  r.build_key = "def456";
  r.isolation = "namespaces";
  r.timed = true;
  r.compile_log = "warning: x";
  r.compile_seconds = 1.5;
  SizeResult ok;
  ok.size = "small";
  ok.correct = true;
  ok.trials_passed = 3;
  ok.reference = Timing{20.0, 19.0, 22.0, 18.5, 100, {19.9, 20.1}};
  ok.candidate = Timing{10.0, 9.5, 11.0, 9.0, 100, {10.0, 9.9}};
  ok.speedup = 2.0;
  ok.roofline_fraction = 0.4;
  ok.roofline_us = 4.0;
  ok.roofline_bound = "link";
  ok.floor = Timing{4.1, 4.0, 4.4, 3.9, 100, {4.1, 4.05}};
  SizeResult bad;
  bad.size = "odd";
  bad.failure = "output mismatch";
  bad.mismatch = wire::Mismatch{"y", 1, "[7]", 7, std::nullopt, 1.5, 0.01, 10, 333333};
  r.sizes = {ok, bad};
  return r;
}

TEST(EvalResult, JsonRoundTripKeepsEveryNumber) {
  EvalResult r = sample();
  nlohmann::json j = r.to_json();
  EXPECT_EQ(j["verdict"], "incorrect");
  EXPECT_TRUE(j["sizes"][1]["mismatch"]["got"].is_null()) << "NaN travels as null";
  EvalResult back = EvalResult::from_json(j);
  EXPECT_EQ(back.to_json(), j);
  EXPECT_DOUBLE_EQ(back.sizes[0].candidate->per_rank_median_us[1], 9.9);
  EXPECT_FALSE(back.sizes[1].reference.has_value());
  EXPECT_DOUBLE_EQ(back.sizes[0].floor->median_us, 4.1);
  EXPECT_FALSE(back.sizes[1].floor.has_value());
}

TEST(Report, ATimeUnderTheFloorIsNotCreditedAsASpeedup) {
  EvalResult r = sample();
  r.verdict = Verdict::kCorrect;
  r.sizes.resize(1);
  r.sizes[0].candidate = Timing{2.0, 1.9, 2.2, 1.8, 100, {2.0, 2.0}};
  r.sizes[0].credible = false;
  r.sizes[0].not_credible = "the measured time (2.00 us) is below the timing floor (an empty kernel, 4.10 us)";
  r.sizes[0].speedup = 0;
  std::string text = format_report(r, "NVIDIA H200");
  EXPECT_NE(text.find("no speedup: not credible: the measured time (2.00 us) is below the timing floor"), std::string::npos)
      << text;
  EXPECT_FALSE(std::regex_search(text, std::regex("[0-9]\\.[0-9]+x"))) << "no speedup may be printed: " << text;
  EXPECT_FALSE(EvalResult::from_json(r.to_json()).sizes[0].credible);
  EXPECT_EQ(EvalResult::from_json(r.to_json()).sizes[0].not_credible, r.sizes[0].not_credible);
}

TEST(EvalResult, VerdictNamesRoundTrip) {
  for (Verdict v : {Verdict::kCorrect, Verdict::kIncorrect, Verdict::kCompileError, Verdict::kRuntimeError,
                    Verdict::kTimeout, Verdict::kInfrastructure, Verdict::kCompiled})
    EXPECT_EQ(verdict_from_string(to_string(v)), v);
}

TEST(Report, TableShowsTimesSpeedupRooflineAndTheMismatch) {
  std::string text = format_report(sample(), "NVIDIA H200");
  EXPECT_NE(text.find("2.00x"), std::string::npos) << text;
  EXPECT_NE(text.find("40% link"), std::string::npos) << text;
  EXPECT_NE(text.find("output 'y' rank 1 index [7]: got nan, expected 1.5 (allowed error 0.01)"), std::string::npos) << text;
  EXPECT_NE(text.find("verdict: incorrect"), std::string::npos) << text;
  EXPECT_NE(text.find("timing floor (an empty kernel, timed the same way): small 4.10 us"), std::string::npos) << text;
  EXPECT_EQ(format_us(12.345), "12.3 us");
  EXPECT_EQ(format_us(1234), "1.23 ms");
}

}  // namespace
}  // namespace mgk::eval
