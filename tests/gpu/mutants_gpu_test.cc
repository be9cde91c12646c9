// Every mutant of the suite (tests/gpu/mutants/, tests/gpu/suite.h's mutants()) judged with
// ranks sharing GPU 0 under its problem's defaults, as a user would run it:
// `mgk eval P mutant.cu --gpus 0,0`, no size flag, no trial count. Each must end `incorrect`
// (a wrong output; the checks catch it) or `runtime_error` (a non-finite or out-of-bounds
// crash is a failure too); anything else, `correct` first, fails the test. One line per
// mutant: problem, mutant, verdict and the last size's failure. Needs one GPU (ctest label
// `gpu`); skips itself where there is none. All of them (230-odd evaluations, the defaults
// include the large presets) take hours: a device visit selects with MGK_MUTANT_PROBLEMS.
//
// What runs (environment):
//   MGK_MUTANT_PROBLEMS  comma-separated globs (default: every problem that has mutants)
//   MGK_MUTANT_GPUS      the --gpus list (default "0,0": the world the defaults check at W = 2)
//   MGK_SUITE_DRY_RUN=1  print the evaluations that would run, run none (no GPU needed)
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "gpu/suite.h"
#include "problems/catalog.h"
#include "support/mgk_cli.h"
#include "support/test_paths.h"

namespace mgk::test {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

bool dry_run() { return env_or("MGK_SUITE_DRY_RUN", "0") == "1"; }

std::vector<std::string> selected() {
  const auto globs = split(env_or("MGK_MUTANT_PROBLEMS", ""));
  std::vector<std::string> out;
  for (const auto& name : problems::list_names()) {
    bool chosen = globs.empty();
    for (const auto& glob : globs) chosen |= problems::glob_match(glob, name);
    if (chosen && !mutants(name).empty()) out.push_back(name);
  }
  return out;
}

class MutantsOnOneGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!dry_run()) MGK_REQUIRE_GPUS(false);
  }
};

TEST_F(MutantsOnOneGpu, EveryMutantIsIncorrectUnderTheDefaults) {
  const std::string gpus = env_or("MGK_MUTANT_GPUS", "0,0");
  int planned = 0, caught = 0, total = 0;
  for (const auto& problem : selected()) {
    for (const auto& mutant : mutants(problem)) {
      const std::string label = problem + " " + mutant.stem().string();
      if (dry_run()) {
        std::cout << "mutant: " << label << " --gpus " << gpus << ": (dry run)" << std::endl;
        ++planned;
        continue;
      }
      SCOPED_TRACE(label);
      CliResult r = run_mgk({"eval", problem, mutant.string(), "--gpus", gpus, "--json", "--no-store", "--timeout", "300"},
                            {{"MGK_HOME", (build_dir() / "gpu-test-home").string()}}, 3600);
      const auto j = r.json();
      const std::string verdict = j.is_null() ? "no JSON" : j.value("verdict", "?");
      std::string why;
      if (!j.is_null() && j.contains("sizes") && !j["sizes"].empty())
        why = j["sizes"].back().value("failure", "").substr(0, 120);
      std::cout << "mutant: " << label << ": " << verdict << (why.empty() ? "" : " (" + why + ")") << " in "
                << int(r.seconds + 0.5) << " s" << std::endl;
      ++total;
      const bool ok = verdict == "incorrect" || verdict == "runtime_error";
      caught += ok;
      EXPECT_TRUE(ok) << label << " was judged " << verdict << " under the defaults:\n" << r.output;
    }
  }
  if (dry_run()) std::cout << "mutant: " << planned << " evaluation(s) planned" << std::endl;
  else std::cout << "mutant: " << caught << " of " << total << " caught" << std::endl;
}

}  // namespace
}  // namespace mgk::test
