// The suite with its ranks sharing GPU 0 (`--gpus 0,0,...`), checked, not timed: every
// problem's plain candidate passes, and the degenerate outputs (zeros, a constant, a copy of
// the input, the plain candidate without its communication) fail. One line per evaluation.
// Needs one GPU (ctest label `gpu`); skips itself where there is none.
//
// What runs (environment):
//   MGK_SUITE_PROBLEMS  comma-separated globs (default "tp/*,norms/*,quant/*,dp/*,sp/*": the compute problems;
//                       "*" adds the collectives to the degenerate test)
//   MGK_SUITE_WORLDS    default "2,4,8"
//   MGK_SUITE_SIZES     only these presets (default: all of a problem's)
//   MGK_SUITE_FULL=1    every preset at every world, for the plain candidate and for every
//                       degenerate. Without it (the default, a subset that covers every
//                       world and every preset): the plain candidate at every preset at W = 2,
//                       at tiny, small, pkb and odd at W = 3 or 4, at tiny, pkb and odd above;
//                       for the degenerates, every preset once per problem, the worlds and the
//                       degenerates taking turns.
//   MGK_SUITE_DRY_RUN=1 print the evaluations that would run, run none (no GPU needed)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <tuple>

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

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

bool full() { return env_or("MGK_SUITE_FULL", "0") == "1"; }
bool dry_run() { return env_or("MGK_SUITE_DRY_RUN", "0") == "1"; }

std::vector<int> worlds() {
  std::vector<int> w;
  for (const auto& s : split(env_or("MGK_SUITE_WORLDS", "2,4,8"))) w.push_back(std::atoi(s.c_str()));
  return w;
}

// The problems selected, each with the presets to consider.
std::vector<std::pair<std::string, std::vector<std::string>>> selected(const std::string& default_globs) {
  const auto only = split(env_or("MGK_SUITE_SIZES", ""));
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const auto& name : problems::list_names()) {
    bool chosen = false;
    for (const auto& glob : split(env_or("MGK_SUITE_PROBLEMS", default_globs))) chosen |= problems::glob_match(glob, name);
    if (!chosen) continue;
    std::vector<std::string> sizes;
    for (const auto& s : problems::load(name).size_names)
      if (only.empty() || std::find(only.begin(), only.end(), s) != only.end()) sizes.push_back(s);
    if (!sizes.empty()) out.push_back({name, sizes});
  }
  return out;
}

class SuiteOnOneGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!dry_run()) MGK_REQUIRE_GPUS(false);
  }

  // `world` ranks on GPU 0; prints one line: problem, world, presets, candidate, verdict.
  // Checks the verdict: `correct`, or incorrect for a mismatch.
  void eval(const std::string& problem, int world, const std::string& sizes, const std::string& label,
            const std::filesystem::path& kernel, const std::vector<std::string>& defines, bool expect_correct) {
    if (dry_run()) {
      std::cout << "suite: " << problem << " W=" << world << " " << sizes << " " << label << ": (dry run)" << std::endl;
      ++planned_;
      return;
    }
    std::string gpus = "0";
    for (int r = 1; r < world; ++r) gpus += ",0";
    std::vector<std::string> args = {"eval", problem, kernel.string(), "--gpus", gpus, "--size", sizes, "--json",
                                     "--no-store", "--timeout", "300"};
    // Correct kernels: two trials and four back-to-back calls per preset. Degenerate ones
    // fail on their first trial.
    if (expect_correct) args.insert(args.end(), {"--trials", "2", "--back-to-back", "4"});
    else args.insert(args.end(), {"--trials", "1", "--back-to-back", "0"});
    for (const auto& d : defines) args.insert(args.end(), {"-D", d});
    CliResult r = run_mgk(args, {{"MGK_HOME", (build_dir() / "gpu-test-home").string()}}, 3600);
    const auto j = r.json();
    std::string verdict = j.is_null() ? "no JSON" : j.value("verdict", "?");
    if (!j.is_null() && j.contains("sizes") && !j["sizes"].empty() && !j["sizes"].back().value("failure", "").empty())
      verdict += " (" + j["sizes"].back().value("failure", "").substr(0, 100) + ")";
    std::cout << "suite: " << problem << " W=" << world << " " << sizes << " " << label << ": " << verdict << " in "
              << int(r.seconds + 0.5) << " s" << std::endl;
    if (!expect_correct) return expect_verdict(r, "incorrect", "mismatch");
    expect_verdict(r, "correct");
    if (!j.is_null() && j.contains("sizes")) {
      EXPECT_EQ(j["sizes"].size(), split(sizes).size()) << r.output;
      for (const auto& s : j["sizes"]) EXPECT_EQ(s.value("trials_passed", 0), 2) << r.output;
    }
  }
  void TearDown() override {
    if (dry_run()) std::cout << "suite: " << planned_ << " evaluation(s) planned" << std::endl;
  }
  int planned_ = 0;
};

TEST_F(SuiteOnOneGpu, EveryPlainCandidatePassesAtEveryPreset) {
  const auto ws = worlds();
  for (const auto& [problem, sizes] : selected("tp/*,norms/*,quant/*,dp/*,sp/*")) {
    const auto kernel = plain_candidate(problem);
    if (kernel.empty() || problem.rfind("collectives/", 0) == 0) continue;  // the collectives': gpu/evaluator_test
    for (int w : ws) {
      std::vector<std::string> run = sizes;
      if (!full() && w > 2) {
        const std::vector<std::string> few = w <= 4 ? std::vector<std::string>{"tiny", "small", "pkb", "odd"}
                                                    : std::vector<std::string>{"tiny", "pkb", "odd"};
        run.clear();
        for (const auto& s : sizes)
          if (std::find(few.begin(), few.end(), s) != few.end()) run.push_back(s);
      }
      if (run.empty()) continue;
      SCOPED_TRACE(problem + " at W=" + std::to_string(w));
      eval(problem, w, join(run), "plain", kernel, {}, true);
    }
  }
}

TEST_F(SuiteOnOneGpu, DegenerateOutputsFailEverywhere) {
  const auto ws = worlds();
  int p = 0;
  for (const auto& [problem, sizes] : selected("tp/*,norms/*,quant/*,dp/*,sp/*")) {
    const auto degs = degenerates(problem);
    std::vector<std::tuple<size_t, int, std::string>> runs;  // degenerate, world, preset
    if (full()) {
      for (size_t d = 0; d < degs.size(); ++d)
        for (int w : ws)
          for (const auto& s : sizes) runs.emplace_back(d, w, s);
    } else {
      for (size_t i = 0; i < sizes.size(); ++i)
        runs.emplace_back((i + p) % degs.size(), ws[(i + p) % ws.size()], sizes[i]);
    }
    for (const auto& [d, world, size] : runs) {
      SCOPED_TRACE(problem + " " + degs[d].name + " at W=" + std::to_string(world) + " size " + size);
      eval(problem, world, size, degs[d].name, degs[d].file, degs[d].defines, false);
    }
    ++p;
  }
}

}  // namespace
}  // namespace mgk::test
