// Mutant of tests/gpu/candidates/gnn/sparse_feature_fetch_projection.cu. Class: a wrong group layout (contiguous id blocks, owner id / ceil(N / W) at row id - owner ceil(N / W), instead of round robin, id mod W at row id / W).
// The owner taken as the block the id falls in, as ParallelKernelBench's range-partitioned
// table assigns nodes, where this table deals them out round robin.
//
// The plain candidate's description:
// Plain: after a barrier, row i of a private embedding buffer is copied from the owner of
// query i's id (rank id mod W, row id / W of its shard, through peer pointers), in query
// order; then out = emb proj on cuBLAS. Under MGK_LOCAL_ONLY only this rank's own rows (the
// others zeros).
#include "../../../candidates/plain_compute.cuh"

namespace {
// emb[i, c] = shard of rank ids[i] mod W, row ids[i] / W, column c; zeros for an owner this
// rank does not use.
__global__ void fetch_kernel(const int64_t* ids, int64_t q, int64_t d, int64_t block, void* const* shards, int world, int first,
                             int end, __nv_bfloat16* emb) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < q * d; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = i / d, c = i % d, id = ids[k];
    const int owner = int(id / block);
    const int64_t row = id - owner * block;
    __nv_bfloat16 v = __float2bfloat16(0.0f);
    if (owner >= first && owner < end) v = static_cast<const __nv_bfloat16*>(shards[owner])[row * d + c];
    emb[i] = v;
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const size_t q = size_t(ctx->inputs[1].shape[0]), d = size_t(mgk::dim(ctx, "D"));
  return plain::setup(ctx, {}, {q * d * 2});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t Q = in[1].shape[0], D = mgk::dim(ctx, "D"), N = mgk::dim(ctx, "N");
  const int64_t block = (N + ctx->world_size - 1) / ctx->world_size;
  auto* emb = static_cast<__nv_bfloat16*>(plain::state(ctx).local[0]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's shard of this call is in place
  fetch_kernel<<<plain::blocks_for(Q * D), 256, 0, s>>>(static_cast<const int64_t*>(in[1].data), Q, D, block, in[0].peers,
                                                        ctx->world_size, plain::first_source(ctx),
                                                        plain::end_source(ctx), emb);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, false, Q, D, D, emb, D, in[2].data, D, out[0].data, D));
  return 0;
}
