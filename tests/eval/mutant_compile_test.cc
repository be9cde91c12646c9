// Real nvcc, no GPU: every mutant of the suite (tests/gpu/mutants/, tests/gpu/suite.h's
// mutants()) compiles with mgk's own eval::compile as a candidate, to PTX (checks_only: the
// plain candidate each is one edit away from is built in full, its imports and host code
// checked, by suite_compile_test; the edit's calls are in the source the source check
// reads), and passes the preprocessed source's and the PTX's checks. A mutant refused at compile time would be caught
// by the policy, not by the oracle, and the GPU test (tests/gpu/mutants_gpu_test.cc) would
// prove nothing about the checks. One test per category, one file at a time, as in
// suite_compile_test.cc.
//
// Issue 33 asks for at least four mutants for every problem, and every problem of the suite
// has them: EveryProblemHasAtLeastFourMutants fails on a problem with fewer, a new problem
// without a tests/gpu/mutants/ folder included (the problems without one are also printed).
#include <gtest/gtest.h>

#include <iostream>
#include <set>

#include "eval/compile.h"
#include "gpu/suite.h"
#include "problems/catalog.h"
#include "support/test_paths.h"

namespace mgk::eval {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> categories() {
  std::set<std::string> c;
  for (const auto& name : problems::list_names()) c.insert(name.substr(0, name.find('/')));
  return {c.begin(), c.end()};
}

bool in_category(const std::string& name, const std::string& category) { return name.rfind(category + "/", 0) == 0; }

class MutantCompile : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { setenv("MGK_HOME", home_.path().c_str(), 1); }
  void TearDown() override { unsetenv("MGK_HOME"); }
  test::TempDir home_{"mgk-mutant-home"};
};

TEST_P(MutantCompile, EveryMutantPassesTheCandidateChecks) {
  int compiled = 0;
  for (const auto& name : problems::list_names()) {
    if (!in_category(name, GetParam())) continue;
    const problems::Spec spec = problems::load(name);
    for (const fs::path& mutant : test::mutants(name)) {
      CompileRequest req{mutant, spec.dir, {}, {}, "sm_90a", false};
      req.checks_only = true;  // the plain candidate it is a copy of is built in full (suite_compile_test)
      CompileResult r = compile(req);
      EXPECT_TRUE(r.ok) << name << ": " << mutant.string() << ": " << r.refusal << "\n" << r.log;
      ++compiled;
    }
  }
  std::cout << "mutants: " << GetParam() << ": " << compiled << " compiled" << std::endl;
}

INSTANTIATE_TEST_SUITE_P(Category, MutantCompile, ::testing::ValuesIn(categories()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Each mutant names its class and why a model would write it (tests/gpu/mutants/README.md).
TEST(MutantFiles, EveryMutantNamesItsClass) {
  for (const auto& name : problems::list_names())
    for (const fs::path& mutant : test::mutants(name)) {
      const std::string text = read_kernel_source(mutant).first;
      EXPECT_EQ(text.rfind("// Mutant of ", 0), 0u) << mutant.string() << " does not start with its description";
      EXPECT_NE(text.find("Class: "), std::string::npos) << mutant.string() << " names no class";
    }
}

// A mutants folder belongs to a problem of the catalog.
TEST(MutantFiles, EveryMutantFolderIsAProblem) {
  const auto names = problems::list_names();
  const std::set<std::string> known(names.begin(), names.end());
  const fs::path root = test::tests_dir() / "gpu/mutants";
  ASSERT_TRUE(fs::is_directory(root));
  for (const auto& category : fs::directory_iterator(root)) {
    if (!category.is_directory()) continue;
    for (const auto& problem : fs::directory_iterator(category.path()))
      if (problem.is_directory())
        EXPECT_TRUE(known.count(category.path().filename().string() + "/" + problem.path().filename().string()))
            << problem.path().string() << " is not a problem of the catalog";
  }
}

TEST(MutantFiles, EveryProblemHasAtLeastFourMutants) {
  std::vector<std::string> without;
  for (const auto& name : problems::list_names()) {
    const auto m = test::mutants(name);
    if (!fs::is_directory(test::mutants_dir(name))) without.push_back(name);
    EXPECT_GE(m.size(), 4u) << name << " has " << m.size() << " mutant(s) under " << test::mutants_dir(name).string();
  }
  std::cout << "mutants: " << (problems::list_names().size() - without.size()) << " problem(s) with mutants, "
            << without.size() << " without yet:";
  for (const auto& name : without) std::cout << " " << name;
  std::cout << std::endl;
}

}  // namespace
}  // namespace mgk::eval
