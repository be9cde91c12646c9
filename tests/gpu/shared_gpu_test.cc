// Ranks sharing one GPU (`mgk eval --gpus 0,0,...`): what a machine with fewer GPUs than
// ranks can check. The ranks' processes time-slice the GPU, so each wait on a peer costs a
// slice (milliseconds): slow, but the protocols (flags, Lamport slots, credits, handshakes)
// run at any world size, checked against the oracle (indexing, epochs, deadlocks; not
// memory-ordering races, since the ranks take turns). Nothing is timed; NCCL does not run.
// Needs one GPU (ctest label `gpu`).
#include <gtest/gtest.h>

#include <cstdlib>

#include "gpu/collectives.h"
#include "support/mgk_cli.h"
#include "support/test_paths.h"

namespace mgk::test {
namespace {

class SharedGpuEval : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpus_available()) GTEST_SKIP() << "skipped: no GPU";
  }
  // `world` ranks, all on GPU 0; two trials and the back-to-back calls at each size.
  CliResult eval(const std::string& problem, int world, std::vector<std::string> extra,
                 const std::string& sizes = "tiny,odd") {
    std::string gpus = "0";
    for (int r = 1; r < world; ++r) gpus += ",0";
    std::vector<std::string> args = {"eval", "collectives/" + problem, "--size", sizes, "--trials", "2",
                                     "--json",   "--no-store",             "--gpus", gpus};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_mgk(args, {{"MGK_HOME", (build_dir() / "gpu-test-home").string()}});
  }
};

// W = 4 runs the experts' paths for more than two ranks, which a two-GPU machine never does.
TEST_F(SharedGpuEval, ExpertsPassUntimedAtWorldTwoAndFour) {
  for (int world : {2, 4}) {
    for (const char* p : kCollectives) {
      SCOPED_TRACE(std::string(p) + " at world " + std::to_string(world));
      auto r = eval(p, world, {"--expert"});
      expect_verdict(r, "correct", "not timed: ranks share a GPU");
      EXPECT_EQ(r.exit_code, 0) << r.output;
      auto j = r.json();
      ASSERT_TRUE(j.contains("sizes")) << r.output;
      for (const auto& s : j["sizes"]) {
        EXPECT_EQ(s.value("trials_passed", 0), 2) << r.output;
        EXPECT_TRUE(s["candidate"].is_null() && s["reference"].is_null()) << "shared ranks must not be timed";
      }
    }
  }
}

// $MGK_TEST_SHARED_WORLD runs the variants at another world size (default 4).
TEST_F(SharedGpuEval, ExpertVariantsPassWithSharedRanks) {
  const char* w = std::getenv("MGK_TEST_SHARED_WORLD");
  const int world = w && *w ? std::atoi(w) : 4;
  for (const auto& [problem, defines] : kExpertVariants) {
    SCOPED_TRACE(variant_label(problem, defines));
    expect_verdict(eval(problem, world, expert_variant_args(defines), "small,odd"), "correct");
  }
}

// The ABI hands mgk_setup a descriptor of every tensor mgk_run will get (dtype included,
// so workspace can be sized by it); the candidate fails its run on any difference.
TEST_F(SharedGpuEval, SetupSeesTheTensorsRunGets) {
  const std::string kernel = (tests_dir() / "gpu/candidates/setup_descriptors.cu").string();
  for (const char* dtype : {"bf16", "f32"}) {
    SCOPED_TRACE(dtype);
    expect_verdict(eval("all_reduce", 2, {kernel, "--dtype", dtype}, "tiny,odd"), "correct");
  }
}

TEST_F(SharedGpuEval, WrongValuesAreStillRejected) {
  expect_verdict(eval("all_reduce", 2, {(tests_dir() / "bad_candidates/wrong_values.cu").string()}), "incorrect",
                 "output mismatch");
}

TEST_F(SharedGpuEval, TheNcclReferenceIsRefusedWithAClearReason) {
  auto r = eval("all_reduce", 2, {"--reference"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("NCCL refuses"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace mgk::test
