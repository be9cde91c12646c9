// Real nvcc, no GPU: every problem's reference (with its oracle) compiles as a reference,
// and every plain candidate and degenerate of the suite (tests/gpu/suite.h), the plain
// candidates without their communication included, compiles and passes every candidate
// check (preprocessed source, PTX, imports): a candidate refused for what it links would
// make the GPU tests prove nothing. One test per category of the suite, compiling one file at
// a time: ctest runs the categories side by side, and no one test comes near ctest's
// timeout on a loaded two-core machine (the whole suite in one test took 750 s there).
#include <gtest/gtest.h>

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

class SuiteCompile : public ::testing::TestWithParam<std::string> {
 protected:
  // The shared cache: what is built here is a hit for the tests that run these files.
  void SetUp() override { setenv("MGK_HOME", test::shared_mgk_home().c_str(), 1); }
  void TearDown() override { unsetenv("MGK_HOME"); }

  // Compiles every request; a failure names the file, its defines and why.
  void expect_all_compile(const std::vector<CompileRequest>& requests) {
    for (const auto& request : requests) {
      CompileResult r = compile(request);
      std::string what = request.source.string();
      for (const auto& d : request.defines) what += " -D" + d;
      EXPECT_TRUE(r.ok) << what << ": " << r.refusal << "\n" << r.log;
    }
  }
};

TEST_P(SuiteCompile, EveryReferenceCompilesAsAReference) {
  std::vector<CompileRequest> requests;
  for (const auto& name : problems::list_names()) {
    if (!in_category(name, GetParam())) continue;
    const problems::Spec spec = problems::load(name);
    requests.push_back({spec.reference_path(), spec.dir, {}, {}, "sm_90a", true});
  }
  ASSERT_FALSE(requests.empty());
  expect_all_compile(requests);
}

TEST_P(SuiteCompile, EveryPlainAndDegenerateCandidatePassesTheCandidateChecks) {
  std::vector<CompileRequest> requests;
  std::set<std::string> seen;  // a degenerate shared by every problem is compiled once
  for (const auto& name : problems::list_names()) {
    if (!in_category(name, GetParam())) continue;
    const problems::Spec spec = problems::load(name);
    const fs::path candidate = test::plain_candidate(name);
    if (name.rfind("collectives/", 0) != 0) {  // the collectives' are compiled by compile_test
      EXPECT_FALSE(candidate.empty()) << name << " has no plain candidate under tests/gpu/candidates/";
      if (!candidate.empty()) requests.push_back({candidate, spec.dir, {}, {}, "sm_90a", false});
    }
    for (const auto& d : test::degenerates(name)) {
      std::string key = d.file.string();
      for (const auto& def : d.defines) key += " " + def;
      if (seen.insert(key).second && !(d.defines.empty() && d.file == candidate))
        requests.push_back({d.file, spec.dir, d.defines, {}, "sm_90a", false});
    }
  }
  expect_all_compile(requests);
}

// Every category of the catalog is a test of its own; a new category is picked up here.
INSTANTIATE_TEST_SUITE_P(Category, SuiteCompile, ::testing::ValuesIn(categories()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(SuiteCompileCoverage, TheCategoriesCoverTheWholeSuite) {
  size_t covered = 0;
  for (const auto& c : categories())
    for (const auto& name : problems::list_names()) covered += in_category(name, c);
  EXPECT_EQ(covered, problems::list_names().size());
  EXPECT_GE(categories().size(), 9u);
}

}  // namespace
}  // namespace mgk::eval
