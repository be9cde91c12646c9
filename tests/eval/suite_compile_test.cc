// Real nvcc, no GPU: every problem's reference (with its oracle) compiles as a reference,
// and every plain candidate and degenerate of the suite (tests/gpu/suite.h), the plain
// candidates without their communication included, compiles and passes every candidate
// check (preprocessed source, PTX, imports): a candidate refused for what it links would
// make the GPU tests prove nothing. Compiles run two at a time.
#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <set>

#include "eval/compile.h"
#include "gpu/suite.h"
#include "problems/catalog.h"
#include "support/test_paths.h"

namespace mgk::eval {
namespace {

namespace fs = std::filesystem;

class SuiteCompile : public ::testing::Test {
 protected:
  void SetUp() override { setenv("MGK_HOME", home_.path().c_str(), 1); }
  void TearDown() override { unsetenv("MGK_HOME"); }

  // Compiles every request, two at a time; a failure names the file, its defines and why.
  void expect_all_compile(const std::vector<CompileRequest>& requests) {
    std::mutex m;
    size_t next = 0;
    auto worker = [&] {
      for (;;) {
        size_t i;
        {
          std::lock_guard<std::mutex> lock(m);
          if (next == requests.size()) return;
          i = next++;
        }
        CompileResult r = compile(requests[i]);
        std::lock_guard<std::mutex> lock(m);
        std::string what = requests[i].source.string();
        for (const auto& d : requests[i].defines) what += " -D" + d;
        EXPECT_TRUE(r.ok) << what << ": " << r.refusal << "\n" << r.log;
      }
    };
    auto a = std::async(std::launch::async, worker);
    worker();
    a.get();
  }
  test::TempDir home_{"mgk-suite-home"};
};

TEST_F(SuiteCompile, EveryReferenceCompilesAsAReference) {
  std::vector<CompileRequest> requests;
  for (const auto& name : problems::list_names()) {
    const problems::Spec spec = problems::load(name);
    requests.push_back({spec.reference_path(), spec.dir, {}, {}, "sm_90a", true});
  }
  ASSERT_GE(requests.size(), 18u);
  expect_all_compile(requests);
}

TEST_F(SuiteCompile, EveryPlainAndDegenerateCandidatePassesTheCandidateChecks) {
  std::vector<CompileRequest> requests;
  std::set<std::string> seen;  // a degenerate shared by every problem is compiled once
  int plain = 0;
  for (const auto& name : problems::list_names()) {
    const problems::Spec spec = problems::load(name);
    const fs::path candidate = test::plain_candidate(name);
    if (name.rfind("collectives/", 0) != 0) {  // the collectives' are compiled by compile_test
      EXPECT_FALSE(candidate.empty()) << name << " has no plain candidate under tests/gpu/candidates/";
      if (!candidate.empty()) requests.push_back({candidate, spec.dir, {}, {}, "sm_90a", false}), ++plain;
    }
    for (const auto& d : test::degenerates(name)) {
      std::string key = d.file.string();
      for (const auto& def : d.defines) key += " " + def;
      if (seen.insert(key).second && !(d.defines.empty() && d.file == candidate))
        requests.push_back({d.file, spec.dir, d.defines, {}, "sm_90a", false});
    }
  }
  EXPECT_GE(plain, 10);
  expect_all_compile(requests);
}

}  // namespace
}  // namespace mgk::eval
