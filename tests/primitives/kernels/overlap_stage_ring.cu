// Primitives under test: overlap/warp_roles.cuh (stage_ring) and mechanism/tma_bulk.cuh
// (mbarriers, bulk loads from a peer): warp 0 loads the root's x into shared-memory stages
// with TMA, the other warps store each stage into y and free it; the block copies any tail
// that is not whole 16-byte units. A broadcast by pull between two handshakes.
#include "primitive_test.cuh"

enum region { kStart, kEnd, kRegions };
constexpr int kStages = 3, kStageBytes = 4096, kRoot = 0;
constexpr int kConsumerWarps = primitive_test::kThreads / prim::kWarpThreads - 1;

struct operands {
  prim::sym_view<char> x;
  char* y;
  int64_t bytes;
  prim::block_flags flags;
  uint64_t epoch;
};

__global__ void __launch_bounds__(primitive_test::kThreads) pull_staged(operands o) {
  __shared__ alignas(128) unsigned char stage[kStages][kStageBytes];
  __shared__ prim::stage_ring<kStages> ring;
  const prim::span part = prim::split_aligned(o.bytes, gridDim.x, blockIdx.x, 16);
  const char* src = o.x.peer(kRoot) + part.begin;
  char* dst = o.y + part.begin;
  const int64_t body = prim::is_aligned(src, 16) && prim::is_aligned(dst, 16) ? part.size() / 16 * 16 : 0;
  const uint32_t chunks = uint32_t(prim::ceil_div(body, kStageBytes));
  ring.init(1, kConsumerWarps);
  prim::block_handshake(o.flags.slots(kStart, blockIdx.x), o.epoch, "stage_ring test: start");
  const prim::stall_site site{"stage_ring test: a stage", o.x.rank, int64_t(blockIdx.x)};
  if (prim::warp_id() == 0) {
    if (prim::lane_id() == 0)
      for (uint32_t k = 0; k < chunks; ++k) {
        const uint32_t len = uint32_t(min(int64_t(kStageBytes), body - int64_t(k) * kStageBytes));
        ring.producer_acquire(k, site);
        ring.producer_expect(k, len);
        prim::bulk_load(stage[ring.stage(k)], src + int64_t(k) * kStageBytes, len, &ring.full[ring.stage(k)]);
      }
  } else {
    const int t = int(threadIdx.x) - prim::kWarpThreads, n = kConsumerWarps * prim::kWarpThreads;
    for (uint32_t k = 0; k < chunks; ++k) {
      const int64_t len = min(int64_t(kStageBytes), body - int64_t(k) * kStageBytes);
      ring.consumer_wait(k, site);
      const uint4* from = reinterpret_cast<const uint4*>(stage[ring.stage(k)]);
      for (int64_t i = t; i < len / 16; i += n) prim::st16(dst + int64_t(k) * kStageBytes + i * 16, from[i]);
      __syncwarp();
      if (prim::lane_id() == 0) ring.consumer_release(k);
    }
  }
  __syncthreads();
  if (body < part.size()) prim::block_copy<1>(dst + body, src + body, part.size() - body);
  prim::block_handshake(o.flags.slots(kEnd, blockIdx.x), o.epoch, "stage_ring test: end");
}

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return primitive_test::setup(ctx, kRegions, pull_staged); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = primitive_test::of(ctx);
  const mgk_tensor *x, *y;
  if (primitive_test::find_x_y(ctx, in, n_in, out, n_out, &x, &y) != 0) return 1;
  operands o{};
  if (prim::view_of(ctx, *x, &o.x) != 0) return 1;
  o.y = static_cast<char*>(y->data);
  o.bytes = int64_t(mgk::nbytes(*y));
  o.flags = st->flags;
  o.epoch = st->epoch.next();
  pull_staged<<<st->blocks, primitive_test::kThreads, 0, stream>>>(o);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
