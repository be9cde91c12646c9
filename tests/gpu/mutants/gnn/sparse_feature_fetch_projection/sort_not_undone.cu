// Mutant of tests/gpu/candidates/gnn/sparse_feature_fetch_projection.cu. Class: a wrong group layout (the rows left in owner order, the stable grouping by owner not undone).
// The queries grouped by owner (stably, as the exchange groups them) and each row
// stored at its place in that grouping: the sort's inverse permutation never applied, so
// the output is in owner order instead of query order.
//
// The plain candidate's description:
// Plain: after a barrier, row i of a private embedding buffer is copied from the owner of
// query i's id (rank id mod W, row id / W of its shard, through peer pointers), in query
// order; then out = emb proj on cuBLAS. Under MGK_LOCAL_ONLY only this rank's own rows (the
// others zeros).
#include "../../../candidates/plain_compute.cuh"

namespace {
// place[i] = the position of query i once the queries are grouped by owner, stably (one
// thread per owner: the queries of lower owners first, then its own in their order).
__global__ void place_kernel(const int64_t* ids, int64_t n, int world, int64_t* place) {
  const int owner = threadIdx.x;
  if (owner >= world) return;
  int64_t at = 0;
  for (int64_t i = 0; i < n; ++i) at += ids[i] % world < owner;
  for (int64_t i = 0; i < n; ++i)
    if (ids[i] % world == owner) place[i] = at++;
}

// emb[i, c] = shard of rank ids[i] mod W, row ids[i] / W, column c; zeros for an owner this
// rank does not use.
__global__ void fetch_kernel(const int64_t* ids, int64_t q, int64_t d, void* const* shards, int world, int first,
                             int end, const int64_t* place, __nv_bfloat16* emb) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < q * d; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = i / d, c = i % d, id = ids[k];
    const int owner = int(id % world);
    const int64_t row = id / world;
    __nv_bfloat16 v = __float2bfloat16(0.0f);
    if (owner >= first && owner < end) v = static_cast<const __nv_bfloat16*>(shards[owner])[row * d + c];
    emb[place[k] * d + c] = v;
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const size_t q = size_t(ctx->inputs[1].shape[0]), d = size_t(mgk::dim(ctx, "D"));
  return plain::setup(ctx, {}, {q * d * 2, q * 8});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t Q = in[1].shape[0], D = mgk::dim(ctx, "D");
  auto* emb = static_cast<__nv_bfloat16*>(plain::state(ctx).local[0]);
  auto* place = static_cast<int64_t*>(plain::state(ctx).local[1]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's shard of this call is in place
  place_kernel<<<1, 128, 0, s>>>(static_cast<const int64_t*>(in[1].data), Q, ctx->world_size, place);
  MGK_LAUNCH_CHECK(ctx);
  fetch_kernel<<<plain::blocks_for(Q * D), 256, 0, s>>>(static_cast<const int64_t*>(in[1].data), Q, D, in[0].peers,
                                                        ctx->world_size, plain::first_source(ctx),
                                                        plain::end_source(ctx), place, emb);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, false, Q, D, D, emb, D, in[2].data, D, out[0].data, D));
  return 0;
}
