#include "tune/eval_objective.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "common/error.h"
#include "problems/catalog.h"
#include "support/test_paths.h"
#include "tune/markers.h"

namespace mgk::tune {
namespace {

results::EvalResult result(results::Verdict verdict, const std::string& message) {
  results::EvalResult r;
  r.verdict = verdict;
  r.message = message;
  r.compile_seconds = 12.5;
  r.wall_seconds = 30;
  return r;
}

results::SizeResult timed(const std::string& size, double median_us) {
  results::SizeResult s;
  s.size = size;
  s.correct = true;
  s.candidate = results::Timing{median_us, 0, 0, 0, 100, {}};
  return s;
}

TEST(EvalObjective, EveryVerdictMapsToAStatus) {
  EXPECT_EQ(status_for(results::Verdict::kCorrect), TrialStatus::kOk);
  EXPECT_EQ(status_for(results::Verdict::kIncorrect), TrialStatus::kIncorrect);
  EXPECT_EQ(status_for(results::Verdict::kCompileError), TrialStatus::kCompile);
  EXPECT_EQ(status_for(results::Verdict::kRuntimeError), TrialStatus::kLaunch);
  EXPECT_EQ(status_for(results::Verdict::kTimeout), TrialStatus::kHang);
  EXPECT_EQ(status_for(results::Verdict::kInfrastructure), TrialStatus::kError);
}

TEST(EvalObjective, TheObjectiveIsTheCandidateMedianAtTheChosenSize) {
  results::EvalResult r = result(results::Verdict::kCorrect, "correct, 1.4x");
  r.sizes = {timed("small", 9.5), timed("medium", 41.25)};
  Measurement m = measurement_from(r, "medium");
  EXPECT_EQ(m.status, TrialStatus::kOk);
  EXPECT_DOUBLE_EQ(m.time_us, 41.25);
  EXPECT_DOUBLE_EQ(m.compile_seconds, 12.5);
  EXPECT_DOUBLE_EQ(m.eval_seconds, 30);

  Measurement missing = measurement_from(r, "large");  // not timed: our fault, not the kernel's
  EXPECT_EQ(missing.status, TrialStatus::kError);
  EXPECT_NE(missing.message.find("no candidate timing for size 'large'"), std::string::npos);
}

// A size crossover (a knob whose best value differs between small and large) can only be
// tuned over several sizes at once.
TEST(EvalObjective, OverSeveralSizesTheObjectiveIsTheGeometricMeanOfTheMedians) {
  EXPECT_EQ(tuning_sizes("small,,large,small"), (std::vector<std::string>{"small", "large"}));
  EXPECT_EQ(tuning_sizes("medium"), (std::vector<std::string>{"medium"}));
  results::EvalResult r = result(results::Verdict::kCorrect, "correct");
  r.sizes = {timed("small", 4.0), timed("medium", 36.0), timed("large", 900.0)};
  Measurement m = measurement_from(r, "small,large");
  EXPECT_EQ(m.status, TrialStatus::kOk);
  EXPECT_DOUBLE_EQ(m.time_us, 60.0);  // sqrt(4 * 900)
  EXPECT_EQ(m.message, "");
  Measurement missing = measurement_from(r, "small,xl");
  EXPECT_EQ(missing.status, TrialStatus::kError);
  EXPECT_NE(missing.message.find("no candidate timing for size 'xl'"), std::string::npos);

  SearchSpace space = parse_markers("// mgk:tune A 1 2\n");
  eval::EvalOptions options;
  options.plan = eval::plan_evaluation(problems::load("collectives/all_reduce"), {}, "", 2);
  EvalObjective objective(space, options, "small,large");
  // Checked at the sizes it is timed at, which are two already.
  EXPECT_EQ(objective.base().plan.size_names(), (std::vector<std::string>{"small", "large"}));
  EXPECT_THROW(EvalObjective(space, options, "small,huge"), UsageError);
}

TEST(EvalObjective, FailuresCarryOneLineSayingWhy) {
  results::EvalResult compile = result(results::Verdict::kCompileError, "nvcc failed");
  compile.compile_log = "kernel.cu(12): warning: unused\nkernel.cu(40): error: identifier "
                        "\"BLOKS\" is undefined\n1 error detected\n";
  EXPECT_EQ(measurement_from(compile, "medium").message,
            "kernel.cu(40): error: identifier \"BLOKS\" is undefined");

  results::EvalResult wrong = result(results::Verdict::kIncorrect, "outputs mismatched");
  wrong.sizes = {timed("small", 1)};
  results::SizeResult bad;
  bad.size = "medium";
  bad.failure = "y: rank 1, index 77: got 0, expected 3.25";
  wrong.sizes.push_back(bad);
  Measurement m = measurement_from(wrong, "medium");
  EXPECT_EQ(m.status, TrialStatus::kIncorrect);
  EXPECT_EQ(m.message, "medium: y: rank 1, index 77: got 0, expected 3.25");
  EXPECT_EQ(m.time_us, 0);

  results::EvalResult hang = result(results::Verdict::kTimeout, "watchdog killed the group");
  hang.phase = "timing";
  EXPECT_EQ(measurement_from(hang, "medium").message, "watchdog killed the group (in timing)");
  EXPECT_EQ(measurement_from(hang, "medium").status, TrialStatus::kHang);

  results::EvalResult launch = result(results::Verdict::kRuntimeError, "");
  EXPECT_EQ(measurement_from(launch, "medium").message, "verdict runtime_error");
}

TEST(EvalObjective, FirstErrorLine) {
  EXPECT_EQ(first_error_line(""), "");
  EXPECT_EQ(first_error_line("\n  \nptxas info: used 40 registers\n"),
            "ptxas info: used 40 registers");
  EXPECT_EQ(first_error_line(std::string(500, 'x') + " error\n").size(), 240u);
}

// Real nvcc, no GPU: a configuration nvcc rejects while being compiled ahead is reported as
// a compile failure without starting an evaluation.
TEST(EvalObjective, AConfigurationThatDoesNotCompileIsReportedFromTheCompileAhead) {
  if (std::system("nvcc --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no nvcc";
  test::TempDir home;
  setenv("MGK_HOME", home.path().c_str(), 1);
  const auto kernel = home.path() / "kernel.cu";
  {
    std::ofstream f(kernel);
    f << "// mgk:tune BAD 0 1\n"
         "#ifndef BAD\n#define BAD 0\n#endif\n"
         "#if BAD\n#error this configuration does not build\n#endif\n";
  }
  std::ifstream in(kernel);
  std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  SearchSpace space = parse_markers(source);
  eval::EvalOptions options;
  options.plan = eval::plan_evaluation(problems::load("collectives/all_reduce"), {}, "", 2);
  options.kernel = kernel;
  EvalObjective objective(space, options, "medium");
  EXPECT_EQ(objective.base().plan.size_names(), (std::vector<std::string>{"small", "medium"}));
  objective.prepare(Config{1});
  Measurement m = objective.measure(Config{1});
  EXPECT_EQ(m.status, TrialStatus::kCompile);
  EXPECT_NE(m.message.find("this configuration does not build"), std::string::npos) << m.message;
  unsetenv("MGK_HOME");
}

TEST(EvalObjective, AnUnknownSizeIsAUsageErrorListingThePresets) {
  SearchSpace space = parse_markers("// mgk:tune A 1 2\n");
  eval::EvalOptions options;
  options.plan = eval::plan_evaluation(problems::load("collectives/all_reduce"), {}, "", 2);
  try {
    EvalObjective objective(space, options, "huge");
    FAIL() << "an unknown size must throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no size preset 'huge'; its presets are tiny, small, medium"),
              std::string::npos)
        << e.what();
  }
  // The plan the command made is resolved again at the tuner's presets, for every trial.
  EvalObjective large(space, options, "large");
  EXPECT_EQ(large.base().plan.size_names(), (std::vector<std::string>{"small", "large"}));
  EXPECT_EQ(large.base().plan.sizes[1].ranks.size(), 2u) << "every rank's plan, at the command's world";
}

}  // namespace
}  // namespace mgk::tune
