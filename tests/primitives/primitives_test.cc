// Device unit tests of the primitives, with every rank on GPU 0 (its peers are other
// processes on the same device, their memory mapped as on a real group): each kernel under
// kernels/ is a small candidate of a collective problem that exercises one primitive (its
// header says which), judged by `mgk eval` against the oracle at a size of whole 16-byte
// vectors and at one with tails, in bf16 and f32, at 2 and 4 ranks ($MGK_TEST_SHARED_WORLD
// adds another). The algorithms and collective templates are tested through the experts
// (tests/gpu/shared_gpu_test.cc). Needs one GPU (ctest label `gpu`).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "support/mgk_cli.h"
#include "support/test_paths.h"

namespace mgk::test {
namespace {

class PrimitiveOnSharedGpu : public ::testing::Test {
 protected:
  void SetUp() override { MGK_REQUIRE_GPUS(false); }

  // `kernel` (kernels/NAME.cu) as a candidate of collectives/`problem`, every rank on GPU 0.
  void expect_correct(const std::string& kernel, const std::string& problem, std::vector<std::string> extra = {}) {
    std::vector<int> worlds = {2, 4};
    if (const char* w = std::getenv("MGK_TEST_SHARED_WORLD"); w && *w && std::atoi(w) > 4) worlds.push_back(std::atoi(w));
    for (int world : worlds) {
      for (const char* dtype : {"bf16", "f32"}) {
        SCOPED_TRACE(kernel + " as " + problem + " at world " + std::to_string(world) + ", " + dtype);
        std::string gpus = "0";
        for (int r = 1; r < world; ++r) gpus += ",0";
        std::vector<std::string> args = {"eval", "collectives/" + problem,
                                         (tests_dir() / "primitives/kernels" / (kernel + ".cu")).string(),
                                         "--trials", "2", "--json", "--no-store", "--gpus", gpus,
                                         "--size", "tiny,odd", "--dtype", dtype};
        args.insert(args.end(), extra.begin(), extra.end());
        CliResult r = run_mgk(args, {{"MGK_HOME", (build_dir() / "gpu-test-home").string()}});
        expect_verdict(r, "correct");
        EXPECT_EQ(r.exit_code, 0) << r.output;
      }
    }
  }
};

TEST_F(PrimitiveOnSharedGpu, BlockCopyPullsAtEveryAlignment) { expect_correct("mechanism_block_copy", "all_gather"); }

TEST_F(PrimitiveOnSharedGpu, TmaRelayPushesBodiesAndTails) { expect_correct("mechanism_tma", "all_gather"); }

TEST_F(PrimitiveOnSharedGpu, CopyEngineForksAndJoinsItsStreams) {
  expect_correct("mechanism_copy_engine", "all_gather");
}

TEST_F(PrimitiveOnSharedGpu, BlockReduceSumsEveryRankInFp32) { expect_correct("math_block_reduce", "all_reduce"); }

TEST_F(PrimitiveOnSharedGpu, LamportAndFlaggedProtocolsShareTheLandingSlots) {
  expect_correct("protocol_one_shot", "all_to_all");
  expect_correct("protocol_one_shot", "all_to_all", {"-D", "MGK_LAMPORT_ESCAPE_ALL=1"});
}

TEST_F(PrimitiveOnSharedGpu, GridBarrierMeetsEveryBlockOfEveryRank) {
  expect_correct("sync_grid_barrier", "all_gather");
}

TEST_F(PrimitiveOnSharedGpu, ChunkFlagsSignalEachChunkToItsReader) {
  expect_correct("overlap_chunk_flags", "all_gather");
}

TEST_F(PrimitiveOnSharedGpu, StageRingHandsTmaStagesToConsumerWarps) {
  expect_correct("overlap_stage_ring", "broadcast");
}

}  // namespace
}  // namespace mgk::test
