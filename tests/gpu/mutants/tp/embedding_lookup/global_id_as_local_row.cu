// Mutant of tests/gpu/candidates/tp/embedding_lookup.cu. Class: off by one in an index (the id not made local).
// The owner's table is indexed by the global id (clamped to its VL rows, as F.embedding callers clamp) instead of id - owner * VL: the shard offset forgotten.
//
// The plain candidate's description:
// Plain: after a barrier, one thread per owner walks this rank's ids in order and gives each
// of its ids the next place in its group (the groups' offsets counted first); then every
// output row is copied from the owner's table (peer pointers).
#include "../../../candidates/plain_compute.cuh"

namespace {
// place[i] = the output row of id i (W threads, one per owner).
__global__ void place_kernel(const int64_t* ids, int64_t n, int64_t vl, int world, int64_t* place) {
  const int owner = threadIdx.x;
  if (owner >= world) return;
  int64_t at = 0;
  for (int64_t i = 0; i < n; ++i) at += ids[i] / vl < owner;
  for (int64_t i = 0; i < n; ++i)
    if (ids[i] / vl == owner) place[i] = at++;
}

__global__ void copy_rows_kernel(const int64_t* ids, const int64_t* place, int64_t n, int64_t vl, int64_t d,
                                 void* const* tables, int first, int end, __nv_bfloat16* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n * d; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = i / d, id = ids[k];
    const int owner = int(id / vl);
    __nv_bfloat16 v = __float2bfloat16(0.0f);
    if (owner >= first && owner < end) v = static_cast<const __nv_bfloat16*>(tables[owner])[(id < vl ? id : vl - 1) * d + i % d];
    out[place[k] * d + i % d] = v;
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}, {size_t(mgk::dim(ctx, "T")) * 8}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t T = mgk::dim(ctx, "T"), D = mgk::dim(ctx, "D"), VL = mgk::dim(ctx, "VL");
  auto* place = static_cast<int64_t*>(plain::state(ctx).local[0]);
  const auto* ids = static_cast<const int64_t*>(in[0].data);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's table of this call is in place
  place_kernel<<<1, 128, 0, s>>>(ids, T, VL, ctx->world_size, place);
  MGK_LAUNCH_CHECK(ctx);
  copy_rows_kernel<<<plain::blocks_for(T * D), 256, 0, s>>>(ids, place, T, VL, D, in[1].peers, plain::first_source(ctx),
                                                            plain::end_source(ctx),
                                                            static_cast<__nv_bfloat16*>(out[0].data));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
