// Mutant of tests/gpu/candidates/gnn/sparse_embedding_all2all.cu. Class: a wrong group layout (within a source the pairs in id order, not in the source's order).
// Each source's segment comes out sorted by id (ties in the source's order), as a sort keyed
// on the whole id, or on (owner, id), gives: the grouping by owner is right, the stable order
// within a source is not.
//
// The plain candidate's description:
// Plain: after a barrier, every source rank's ids are copied here (peer pointers); one
// thread per source walks its ids in order and counts those this rank owns (id mod W), one
// thread adds the counts up into the sources' offsets (rank order), and the same threads walk
// the ids again, giving each owned id the next place in its source's segment (so the order
// within a source is kept). Then every output row is copied from its source's value row
// (peer pointers), zeros past the count. Under MGK_LOCAL_ONLY only this rank's own ids.
#include "../../../candidates/plain_compute.cuh"

namespace {
// Where rank s's ids sit in the local copy (first[s]) and how many it has (nnz[s]: NA + ND
// ((s + S) % 3), zero for a source this rank does not use).
struct Layout {
  int64_t first[MGK_MAX_WORLD + 1];
  int64_t nnz[MGK_MAX_WORLD];
};

// One block, thread s < world for source s. Places past the capacity are never written (none
// are when the counts are right).
__global__ void place_kernel(const int64_t* ids, Layout l, int world, int rank, int64_t capacity, int64_t* recv_idx,
                             int* src_rank, int64_t* src_row, int64_t* count) {
  __shared__ int64_t start[MGK_MAX_WORLD + 1];
  const int s = threadIdx.x;
  if (s < world) {
    int64_t mine = 0;
    for (int64_t i = 0; i < l.nnz[s]; ++i) mine += ids[l.first[s] + i] % world == rank;
    start[s + 1] = mine;
  }
  __syncthreads();
  if (s == 0) {
    start[0] = 0;
    for (int p = 0; p < world; ++p) start[p + 1] += start[p];
    *count = start[world] < capacity ? start[world] : capacity;
  }
  __syncthreads();
  if (s < world) {
    int64_t at = start[s];
    for (int64_t i = 0; i < l.nnz[s]; ++i) {
      const int64_t id = ids[l.first[s] + i];
      if (id % world != rank || at >= capacity) continue;
      recv_idx[at] = id;
      src_rank[at] = s;
      src_row[at] = i;
      ++at;
    }
    for (int64_t a = start[s] + 1; a < at; ++a) {  // the segment sorted by id (an insertion sort)
      const int64_t id = recv_idx[a], row = src_row[a];
      int64_t b = a;
      for (; b > start[s] && recv_idx[b - 1] > id; --b) {
        recv_idx[b] = recv_idx[b - 1];
        src_row[b] = src_row[b - 1];
      }
      recv_idx[b] = id;
      src_row[b] = row;
    }
  }
}

// Rows below *count: the source's value row; the rest (and recv_idx past *count): zeros.
__global__ void finish_kernel(void* const* values, const int* src_rank, const int64_t* src_row, const int64_t* count,
                              int64_t capacity, int64_t h, int64_t* recv_idx, __nv_bfloat16* recv_value) {
  const int64_t n = *count;
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < capacity * h;
       j += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = j / h;
    __nv_bfloat16 v = __float2bfloat16(0.0f);
    if (k < n) v = static_cast<const __nv_bfloat16*>(values[src_rank[k]])[src_row[k] * h + j % h];
    recv_value[j] = v;
    if (j < capacity && j >= n) recv_idx[j] = 0;
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const size_t cap = size_t(mgk::dim(ctx, "RT"));
  if (int rc = plain::setup(ctx, {}, {cap * 8, cap * 4, cap * 8})) return rc;
  // Every place's source starts as rank 0's pair 0, a valid one.
  MGK_CUDA_TRY(ctx, cudaMemset(plain::state(ctx).local[1], 0, cap * 4));
  MGK_CUDA_TRY(ctx, cudaMemset(plain::state(ctx).local[2], 0, cap * 8));
  return 0;
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int W = ctx->world_size, r = ctx->rank;
  const int64_t NA = mgk::dim(ctx, "NA"), ND = mgk::dim(ctx, "ND"), S = mgk::dim(ctx, "S");
  const int64_t H = mgk::dim(ctx, "H"), RT = mgk::dim(ctx, "RT");
  auto* ids = static_cast<int64_t*>(plain::state(ctx).local[0]);
  auto* src_rank = static_cast<int*>(plain::state(ctx).local[1]);
  auto* src_row = static_cast<int64_t*>(plain::state(ctx).local[2]);
  auto* recv_idx = static_cast<int64_t*>(out[0].data);
  auto* count = static_cast<int64_t*>(out[2].data);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's inputs of this call are in place
  Layout l{};
  for (int src = 0; src < W; ++src) {
    l.first[src + 1] = l.first[src] + NA + ND * ((src + S) % 3);
    l.nnz[src] = plain::uses(ctx, src) ? NA + ND * ((src + S) % 3) : 0;
    MGK_CUDA_TRY(ctx, simple::copy(in[0].host_peers[src], ids + l.first[src], l.nnz[src] * 8, s));
  }
  place_kernel<<<1, 128, 0, s>>>(ids, l, W, r, RT, recv_idx, src_rank, src_row, count);
  MGK_LAUNCH_CHECK(ctx);
  finish_kernel<<<plain::blocks_for(RT * H), 256, 0, s>>>(in[1].peers, src_rank, src_row, count, RT, H, recv_idx,
                                                          static_cast<__nv_bfloat16*>(out[1].data));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
