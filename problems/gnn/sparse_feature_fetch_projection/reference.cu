// Reference: a sparse feature fetch from an embedding table sharded round robin (node id i
// is row i / W of rank i mod W), then a projection, at library speed. One kernel computes
// each query's owner and the per-owner counts; CUB's radix sort on the owner (stable: a
// least-significant-digit sort) gives the permutation that groups the queries by owner in
// their order; one kernel gathers the ids in that order. NCCL exchanges the counts, the host
// reads them (a synchronisation, as ParallelKernelBench's .tolist() is), one NCCL group sends
// every owner the ids it serves, each owner gathers those rows of its shard, and a second
// group sends them back (the own segment by device copies). One kernel undoes the sort (row k
// of the owner order goes back to query perm[k]) and cuBLASLt projects the rows (bf16 in,
// fp32 accumulation, bf16 out) straight into the output.
#include <cub/cub.cuh>

#include <algorithm>
#include <vector>

#include "mgk/lt_gemm.h"
#include "mgk/reference_kit.h"
#include "../owner_buckets.cuh"

namespace {

using gnn::bits_for;
using gnn::owners_kernel;

// send_ids[k] = ids[perm[k]]: the ids in owner order.
__global__ void ids_in_order_kernel(const int* perm, int64_t n, const int64_t* ids, int64_t* send_ids) {
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
    send_ids[k] = ids[perm[k]];
}

// Row j of `rows` = shard row ids[j] / W (this rank owns every id it is asked for; clamped to
// the shard, which only bench/compute's all-local stand-in needs). kVec: rows of whole
// 16-byte words.
template <bool kVec>
__global__ void fetch_kernel(const int64_t* ids, int64_t n, int world, int64_t shard_rows,
                             const __nv_bfloat16* shard, int64_t d, __nv_bfloat16* rows) {
  const int64_t per_row = kVec ? d / 8 : d;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n * per_row;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = i / per_row, c = i % per_row;
    const int64_t src = std::min<int64_t>(ids[j] / world, shard_rows - 1);
    if (kVec) reinterpret_cast<uint4*>(rows + j * d)[c] = reinterpret_cast<const uint4*>(shard + src * d)[c];
    else rows[j * d + c] = shard[src * d + c];
  }
}

// emb row perm[k] = gathered row k: the query order restored.
template <bool kVec>
__global__ void unsort_kernel(const int* perm, int64_t n, const __nv_bfloat16* gathered, int64_t d,
                              __nv_bfloat16* emb) {
  const int64_t per_row = kVec ? d / 8 : d;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n * per_row;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = i / per_row, c = i % per_row;
    const int64_t dst = perm[k];
    if (kVec) reinterpret_cast<uint4*>(emb + dst * d)[c] = reinterpret_cast<const uint4*>(gathered + k * d)[c];
    else emb[dst * d + c] = gathered[k * d + c];
  }
}

int grid(int64_t work, int64_t cap) { return int(std::max<int64_t>(1, std::min<int64_t>((work + 255) / 256, cap))); }

cudaError_t fetch(const int64_t* ids, int64_t n, int world, int64_t shard_rows, const __nv_bfloat16* shard, int64_t d,
                  __nv_bfloat16* rows, cudaStream_t st) {
  if (n <= 0) return cudaSuccess;
  if (d % 8 == 0) fetch_kernel<true><<<grid(n * d / 8, 16384), 256, 0, st>>>(ids, n, world, shard_rows, shard, d, rows);
  else fetch_kernel<false><<<grid(n * d, 16384), 256, 0, st>>>(ids, n, world, shard_rows, shard, d, rows);
  return cudaGetLastError();
}

cudaError_t unsort(const int* perm, int64_t n, const __nv_bfloat16* gathered, int64_t d, __nv_bfloat16* emb,
                   cudaStream_t st) {
  if (n <= 0) return cudaSuccess;
  if (d % 8 == 0) unsort_kernel<true><<<grid(n * d / 8, 16384), 256, 0, st>>>(perm, n, gathered, d, emb);
  else unsort_kernel<false><<<grid(n * d, 16384), 256, 0, st>>>(perm, n, gathered, d, emb);
  return cudaGetLastError();
}

struct SparseFeatureFetchProjection : mgk::Reference {
  using Reference::Reference;
  const int64_t QA = dim("QA"), QD = dim("QD"), S = dim("S"), D = dim("D"), N = dim("N");
  const int64_t shard_rows = ctx->inputs[0].shape[0];  // this rank's rows of the table
  const int64_t Q = ctx->inputs[1].shape[0];           // this rank's queries
  int64_t capacity = 0;                                // every rank's queries: the most one owner serves
  mgk::lt::Handle lt;
  mgk::lt::Gemm gemm;
  mgk::DeviceBuffer<int> owner, owner_sorted, slot, perm;
  mgk::DeviceBuffer<int64_t> send_ids, recv_ids;
  mgk::DeviceBuffer<__nv_bfloat16> served;    // capacity x D: the rows this rank serves, by asker
  mgk::DeviceBuffer<__nv_bfloat16> gathered;  // Q x D: this rank's rows, in owner order
  mgk::DeviceBuffer<__nv_bfloat16> emb;       // Q x D: in query order
  mgk::DeviceBuffer<int64_t> counts;          // 2W: sent to each owner, received from each rank
  mgk::DeviceBuffer<char> sort_temp;
  size_t sort_temp_bytes = 0;
  std::vector<int64_t> host_counts;

  int setup() {
    const int W = world();
    for (int s = 0; s < W; ++s) capacity += QA + QD * ((s + S) % 3);
    const int64_t n = std::max<int64_t>(Q, 1);
    MGK_CUDA_TRY(ctx, owner.allocate(n));
    MGK_CUDA_TRY(ctx, owner_sorted.allocate(n));
    MGK_CUDA_TRY(ctx, slot.allocate(n));
    MGK_CUDA_TRY(ctx, perm.allocate(n));
    MGK_CUDA_TRY(ctx, send_ids.allocate(n));
    MGK_CUDA_TRY(ctx, recv_ids.allocate(std::max<int64_t>(capacity, n)));
    MGK_CUDA_TRY(ctx, served.allocate(std::max<int64_t>(capacity, n) * D));
    MGK_CUDA_TRY(ctx, gathered.allocate(n * D));
    MGK_CUDA_TRY(ctx, emb.allocate(n * D));
    MGK_CUDA_TRY(ctx, counts.allocate(2 * W));
    MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(nullptr, sort_temp_bytes, owner.get(), owner_sorted.get(),
                                                      slot.get(), perm.get(), int(Q), 0, bits_for(W)));
    MGK_CUDA_TRY(ctx, sort_temp.allocate(std::max<size_t>(sort_temp_bytes, 16)));
    host_counts.resize(2 * W);
    MGK_CUBLAS_TRY(ctx, lt.create());
    MGK_CUBLAS_TRY(ctx, gemm.plan(lt, {Q, D, D}));  // out (Q x D) = emb (Q x D) proj (D x D)
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int W = world(), r = rank();
    const auto [shard, ids, proj] = mgk::tensor_data<const __nv_bfloat16, const int64_t, const __nv_bfloat16>(in);
    int64_t* send_counts = counts;

    // The bucketing: owners and counts, a stable sort by owner, the ids in that order.
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(send_counts, 0, size_t(W) * 8, st));
    owners_kernel<<<grid(Q, 4096), 256, 0, st>>>(ids, Q, W, owner, slot, send_counts);
    MGK_LAUNCH_CHECK(ctx);
    size_t temp = sort_temp_bytes;
    MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(sort_temp.get(), temp, owner.get(), owner_sorted.get(), slot.get(),
                                                      perm.get(), int(Q), 0, bits_for(W), st));
    ids_in_order_kernel<<<grid(Q, 4096), 256, 0, st>>>(perm, Q, ids, send_ids);
    MGK_LAUNCH_CHECK(ctx);

    const ncclComm_t group = comm();
    if (!group) {  // bench/compute: the fetch, the unsort and the GEMM, as if this rank owned every id
      MGK_CUDA_TRY(ctx, fetch(send_ids, Q, W, shard_rows, shard, D, gathered, st));
    } else {
      // The count exchange, read by the host.
      mgk::ExchangeSizes sizes;
      if (int rc = mgk::exchange_sizes(ctx, group, counts, host_counts, Q, capacity, sizes, st)) return rc;
      const auto& [sent, got, send_at, recv_at] = sizes;
      const int64_t served_rows = recv_at[W];

      // The ids to their owners (a zero count is no message on either side: both know it).
      if (int rc = mgk::exchange_blocks(ctx, group, send_ids, sent, send_at.data(), recv_ids, got, recv_at.data(), 8, st))
        return rc;

      // The owner's gather, and the rows back to the askers, in owner order.
      MGK_CUDA_TRY(ctx, fetch(recv_ids, served_rows, W, shard_rows, shard, D, served, st));
      // The rows back: what this rank served each asker (got[p] rows), into the rows it asked for.
      if (int rc = mgk::exchange_blocks(ctx, group, served, got, recv_at.data(), gathered, sent, send_at.data(),
                                        size_t(D) * sizeof(__nv_bfloat16), st))
        return rc;
    }

    // The query order restored, then the projection.
    MGK_CUDA_TRY(ctx, unsort(perm, Q, gathered, D, emb, st));
    MGK_CUBLAS_TRY(ctx, gemm.run(emb, proj, out[0].data, st));
    return 0;
  }

  // out = E P exactly, with E (Q x D) row i = the regenerated shard row of query i's id (its
  // owner id mod W, row id / W: the ids and every owner's table regenerated on the device, as
  // the harness drew them) and P this rank's regenerated projection, rounded once at the end
  // (oracle_gemm.cuh: scale = |E P| + fp32_accumulation(D) |E| |P|).
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    namespace o = mgk::oracle;
    const int W = world(), r = rank();
    const int64_t D = this->D, N = this->N, Q = this->Q;  // by value into the device lambda
    if (a->outputs[0].shape[0] != Q)
      return mgk::set_error(ctx, "oracle: %lld queries, out has %lld rows", (long long)Q,
                            (long long)a->outputs[0].shape[0]);
    o::Scratch scratch(st);
    double *E = scratch.get<double>(Q * D), *P = scratch.get<double>(D * D);
    int* bad = scratch.get<int>(1);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    const mgk_input_gen gshard = a->gens[0], gids = a->gens[1];
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(bad, 0, sizeof(int), st));
    MGK_CUDA_TRY(ctx, o::for_each(
                          Q * D,
                          [=] __device__(int64_t i) {
                            const int64_t q = i / D, c = i % D;
                            const int64_t id = int64_t(mgk::gen_value(gids, r, q));
                            if (id < 0 || id >= N) {
                              *bad = 1;
                              E[i] = 0;
                              return;
                            }
                            E[i] = mgk::gen_value(gshard, int(id % W), (id / W) * D + c);
                          },
                          st));
    int host_bad = 0;
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(&host_bad, bad, sizeof(int), cudaMemcpyDeviceToHost, st));
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
    if (host_bad) return mgk::set_error(ctx, "oracle: a query id outside [0, N)");
    MGK_CUDA_TRY(ctx, o::regen(a->gens[2], r, D, 0, 0, D, D, P, D, st));
    const auto [expected, scale] = mgk::oracle_output(a, 0);
    return o::product_rounded_once(ctx, blas, Q, D, D, {E, D, Q * D}, {P, D, D * D}, expected, scale, st);
  }
};

}  // namespace

MGK_REFERENCE(SparseFeatureFetchProjection)
