// The GPU tests skip only where the machine truly has no GPU. Run here as a user would run
// them, with the harness replaced: a harness that cannot start, one that is missing, one
// whose probe prints garbage or fails, each makes them FAIL; a probe that says cleanly
// "no GPU" makes them skip.
#include <gtest/gtest.h>

#include "process/run.h"
#include "support/fakes.h"
#include "support/test_paths.h"

namespace mgk::test {
namespace {

process::ProcessResult gpu_tests_with(const std::string& harness) {
  return process::run_tool({(build_dir() / "tests/gpu_tests").string(), "--gtest_filter=SharedGpuEval.*"},
                           std::chrono::seconds(120), {}, {{"MGK_HARNESS", harness}});
}

TEST(GpuProbe, ABrokenHarnessFailsTheGpuTestsInsteadOfSkippingThem) {
  TempDir bin("mgk-probe-fakes");
  const std::string cannot_load = (tests_dir() / "fakes/broken_harness.sh").string();
  for (const std::string& harness : {cannot_load, (bin.path() / "no-such-harness").string(),
                                     fake("scripted-harness", bin.path(), "scripted-harness-badprobe").string(),
                                     fake("scripted-harness", bin.path(), "scripted-harness-probefails").string()}) {
    SCOPED_TRACE(harness);
    process::ProcessResult r = gpu_tests_with(harness);
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("the GPU probe is broken, so GPU tests cannot run"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("skipped: no GPU"), std::string::npos) << r.output;
  }
}

TEST(GpuProbe, NoGpuSaidCleanlySkipsThem) {
  TempDir bin("mgk-probe-fakes");
  process::ProcessResult r = gpu_tests_with(fake("scripted-harness", bin.path(), "scripted-harness-nogpu").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("skipped: no GPU (scripted: no GPU here)"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace mgk::test
