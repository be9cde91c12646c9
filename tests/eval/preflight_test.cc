// The references compiled before a session's first paid call: in parallel, into the compile
// cache the evaluations then hit, the first broken one (in the problems' order) named.
// Real nvcc, no GPU.
#include "eval/preflight.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/error.h"
#include "eval/compile.h"
#include "problems/catalog.h"
#include "support/test_paths.h"

namespace mgk::eval {
namespace {

class Preflight : public ::testing::Test {
 protected:
  void SetUp() override { setenv("MGK_HOME", home_.path().c_str(), 1); }
  void TearDown() override { unsetenv("MGK_HOME"); }
  test::TempDir home_{"mgk-preflight"}, broken_{"mgk-broken-problem"};
};

TEST_F(Preflight, TheReferencesAreCompiledIntoTheCacheAndTheFirstBrokenOneIsNamed) {
  std::vector<problems::Spec> specs = {problems::load("collectives/all_gather"), problems::load("collectives/broadcast")};
  compile_references(specs, "");
  for (const auto& s : specs) {
    eval::CompileResult r = eval::compile({s.reference_path(), s.dir, {}, {}, "", true, ""});
    EXPECT_TRUE(r.ok && r.cached) << s.name << ": " << r.log;
  }

  problems::Spec broken = specs[1];
  broken.name = "scratch/broken";
  broken.dir = broken_.path();
  std::ofstream(broken.reference_path()) << "int f() { return undefined_name; }\n";
  try {
    compile_references({specs[0], broken, specs[1]}, "");
    FAIL() << "a reference that does not compile passed";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the reference of scratch/broken does not compile"), std::string::npos) << what;
    EXPECT_NE(what.find("undefined_name"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace mgk::eval
