// Design choices read from kernel sources: the plain candidates, the experts written on
// primitives/, and snippets with the raw CUDA/PTX spellings. Comments never count.
#include "report/kernel_features.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "common/env.h"
#include "common/file.h"
#include "problems/catalog.h"
#include "support/test_paths.h"

namespace mgk::report {
namespace {

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(KernelFeatures, RawSpellingsOfEachMechanism) {
  KernelFeatures tma = detect_features(R"(
    __global__ void k(const char* peer, char* out) {
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" :: "r"(0), "l"(peer), "r"(16), "r"(0));
    })");
  EXPECT_TRUE(has(tma.transfer, "tma"));
  KernelFeatures ce = detect_features(R"(
    int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
      for (int r = 0; r < ctx->world_size; ++r) cudaMemcpyPeerAsync(out[0].data, ctx->rank, in[0].host_peers[r], r, 64, s);
      return 0;
    })");
  EXPECT_EQ(ce.transfer, std::vector<std::string>{"copy_engine"}) << "host-side host_peers[] is not a register transfer";
  KernelFeatures reg = detect_features(R"(
    __global__ void sum(void* const* x_peers, int world, float* y, long n) {
      for (long i = threadIdx.x; i < n; i += blockDim.x) { float a = 0; for (int r = 0; r < world; ++r) a += ((const float*)x_peers[r])[i]; y[i] = a; }
    })");
  EXPECT_EQ(reg.transfer, std::vector<std::string>{"register"});
}

TEST(KernelFeatures, OverlapAndSynchronisation) {
  KernelFeatures f = detect_features(R"(
    __global__ void k(unsigned long long* flag) {
      asm volatile("st.release.sys.global.u64 [%0], %1;" :: "l"(flag), "l"(1ull) : "memory");
      cooperative_groups::this_grid().sync();
    }
    void host() { cudaStream_t side; cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking); })");
  EXPECT_TRUE(has(f.sync, "flags"));
  EXPECT_TRUE(has(f.sync, "grid_barrier"));
  EXPECT_TRUE(has(f.overlap, "streams"));
  KernelFeatures ws = detect_features("mgk::prim::stage_ring<4> ring; mgk::prim::role_split split{8};");
  EXPECT_TRUE(has(ws.overlap, "warp_specialization"));
  EXPECT_TRUE(has(ws.overlap, "sm_partition"));
}

TEST(KernelFeatures, CommentsAreNotCode) {
  KernelFeatures f = detect_features(R"(
    // We avoid TMA (cp.async.bulk) and cudaMemcpyPeerAsync here; /* stage_ring would help */
    int mgk_setup(mgk_ctx*) { return 0; })");
  EXPECT_TRUE(f.transfer.empty());
  EXPECT_TRUE(f.overlap.empty());
  EXPECT_TRUE(f.sync.empty());
}

TEST(KernelFeatures, ThePlainAllReduceCandidatePullsWithRegistersBehindFlags) {
  const auto dir = test::tests_dir() / "gpu" / "candidates";
  std::string source = read_file(dir / "all_reduce.cu") + read_file(dir / "simple_common.cuh");
  KernelFeatures f = detect_features(source);
  EXPECT_EQ(f.transfer, std::vector<std::string>{"register"});
  EXPECT_EQ(f.sync, std::vector<std::string>{"flags"});
  EXPECT_TRUE(f.overlap.empty());
}

TEST(KernelFeatures, EveryExpertUsesSomeMechanismTheGuideNames) {
  int experts = 0;
  for (const std::string& name : problems::list_names()) {
    const auto expert = problems::problems_dir() / name / "expert.cu";
    if (!std::filesystem::exists(expert)) continue;
    ++experts;
    KernelFeatures f = detect_features(read_file(expert));
    EXPECT_FALSE(f.transfer.empty()) << expert;
    EXPECT_FALSE(f.sync.empty()) << expert;
  }
  EXPECT_GT(experts, 0);
}

TEST(KernelFeatures, NamesAreListedInDisplayOrder) {
  EXPECT_EQ(transfer_names(), (std::vector<std::string>{"register", "tma", "copy_engine"}));
  EXPECT_EQ(sync_names().front(), "flags");
}

}  // namespace
}  // namespace mgk::report
