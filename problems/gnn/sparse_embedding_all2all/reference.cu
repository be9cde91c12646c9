// Reference: DGL's sparse all-to-all push (a remainder partition: id i belongs to rank
// i mod W) at library speed. One kernel computes each id's owner and the per-owner counts;
// CUB's radix sort on the owner (stable: a least-significant-digit sort) gives the
// permutation that groups the pairs by owner with their order kept; one kernel gathers the
// ids and value rows in that order into send buffers. NCCL exchanges the counts, the host
// reads them (a synchronisation, as ParallelKernelBench's .tolist() is), and one NCCL group
// sends each owner its ids and rows, received straight into this rank's outputs at the
// offsets the received counts give (source ranks ascending). The own segment is a device
// copy; the unfilled tail of the outputs is zeroed, and the filled length written.
#include <cub/cub.cuh>

#include <algorithm>
#include <vector>

#include "mgk/reference_kit.h"
#include "../owner_buckets.cuh"

namespace {

using gnn::bits_for;
using gnn::owners_kernel;

// Pair k of the send buffers = pair perm[k] of the inputs: send_idx[k] = idx[perm[k]] and
// row k of send_value = row perm[k] of value. kVec: rows of whole 16-byte words.
template <bool kVec>
__global__ void gather_kernel(const int* perm, int64_t n, const int64_t* idx, const __nv_bfloat16* value, int64_t h,
                              int64_t* send_idx, __nv_bfloat16* send_value) {
  const int64_t per_row = kVec ? h / 8 : h;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n * per_row;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = i / per_row, c = i % per_row;
    const int64_t src = perm[k];
    if (c == 0) send_idx[k] = idx[src];
    if (kVec) reinterpret_cast<uint4*>(send_value + k * h)[c] = reinterpret_cast<const uint4*>(value + src * h)[c];
    else send_value[k * h + c] = value[src * h + c];
  }
}

struct SparseEmbeddingAll2All : mgk::Reference {
  using Reference::Reference;
  const int64_t NA = dim("NA"), ND = dim("ND"), S = dim("S"), H = dim("H"), N = dim("N");
  const int64_t nnz = ctx->inputs[0].shape[0];        // this rank's pairs
  const int64_t capacity = ctx->outputs[0].shape[0];  // RT: every rank's pairs
  mgk::DeviceBuffer<int> owner, owner_sorted, slot, perm;
  mgk::DeviceBuffer<int64_t> send_idx;
  mgk::DeviceBuffer<__nv_bfloat16> send_value;
  mgk::DeviceBuffer<int64_t> counts;  // 2W: sent to each owner, received from each rank
  mgk::DeviceBuffer<char> sort_temp;
  size_t sort_temp_bytes = 0;
  std::vector<int64_t> host_counts;
  int64_t received = 0;  // the filled length, copied to recv_count

  int setup() {
    const int W = world();
    const int64_t n = std::max<int64_t>(nnz, 1);
    MGK_CUDA_TRY(ctx, owner.allocate(n));
    MGK_CUDA_TRY(ctx, owner_sorted.allocate(n));
    MGK_CUDA_TRY(ctx, slot.allocate(n));
    MGK_CUDA_TRY(ctx, perm.allocate(n));
    MGK_CUDA_TRY(ctx, send_idx.allocate(n));
    MGK_CUDA_TRY(ctx, send_value.allocate(n * H));
    MGK_CUDA_TRY(ctx, counts.allocate(2 * W));
    MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(nullptr, sort_temp_bytes, owner.get(), owner_sorted.get(),
                                                      slot.get(), perm.get(), int(nnz), 0, bits_for(W)));
    MGK_CUDA_TRY(ctx, sort_temp.allocate(std::max<size_t>(sort_temp_bytes, 16)));
    host_counts.resize(2 * W);
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int W = world(), r = rank();
    const auto [idx, value] = mgk::tensor_data<const int64_t, const __nv_bfloat16>(in);
    const auto [recv_idx, recv_value] = mgk::tensor_data<int64_t, __nv_bfloat16>(out);
    int64_t* send_counts = counts;

    // The bucketing: owners and counts, a stable sort by owner, the pairs gathered in that order.
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(send_counts, 0, size_t(W) * 8, st));
    if (nnz > 0) {
      const int blocks = int(std::min<int64_t>((nnz + 255) / 256, 4096));
      owners_kernel<<<blocks, 256, 0, st>>>(idx, nnz, W, owner, slot, send_counts);
      MGK_LAUNCH_CHECK(ctx);
      size_t temp = sort_temp_bytes;
      MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(sort_temp.get(), temp, owner.get(), owner_sorted.get(),
                                                        slot.get(), perm.get(), int(nnz), 0, bits_for(W), st));
      const bool vec = H % 8 == 0;
      const int64_t work = nnz * (vec ? H / 8 : H);
      const int gblocks = int(std::min<int64_t>((work + 255) / 256, 16384));
      if (vec) gather_kernel<true><<<gblocks, 256, 0, st>>>(perm, nnz, idx, value, H, send_idx, send_value);
      else gather_kernel<false><<<gblocks, 256, 0, st>>>(perm, nnz, idx, value, H, send_idx, send_value);
      MGK_LAUNCH_CHECK(ctx);
    }
    const ncclComm_t group = comm();
    if (!group) return 0;  // bench/compute: the bucketing alone

    // The count exchange, read by the host.
    mgk::ExchangeSizes sizes;
    if (int rc = mgk::exchange_sizes(ctx, group, counts, host_counts, nnz, capacity, sizes, st)) return rc;
    const auto& [sent, got, send_at, recv_at] = sizes;
    received = recv_at[W];

    // The payload: ids and rows to every owner, received in source order straight into place.
    const size_t row_bytes = size_t(H) * sizeof(__nv_bfloat16);
    if (sent[r] > 0) {
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(recv_idx + recv_at[r], send_idx + send_at[r], size_t(sent[r]) * 8,
                                        cudaMemcpyDeviceToDevice, st));
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(recv_value + recv_at[r] * H, send_value + send_at[r] * H,
                                        size_t(sent[r]) * row_bytes, cudaMemcpyDeviceToDevice, st));
    }
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    for (int p = 0; p < W; ++p) {
      if (p == r) continue;
      if (sent[p] > 0) {  // both sides know the count: a zero count is no message on either
        MGK_NCCL_TRY(ctx, ncclSend(send_idx + send_at[p], size_t(sent[p]), ncclInt64, p, group, st));
        MGK_NCCL_TRY(ctx, ncclSend(send_value + send_at[p] * H, size_t(sent[p] * H), ncclBfloat16, p, group, st));
      }
      if (got[p] > 0) {
        MGK_NCCL_TRY(ctx, ncclRecv(recv_idx + recv_at[p], size_t(got[p]), ncclInt64, p, group, st));
        MGK_NCCL_TRY(ctx, ncclRecv(recv_value + recv_at[p] * H, size_t(got[p] * H), ncclBfloat16, p, group, st));
      }
    }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());

    // The tail beyond the filled length is zeros; the length itself.
    if (received < capacity) {
      MGK_CUDA_TRY(ctx, cudaMemsetAsync(recv_idx + received, 0, size_t(capacity - received) * 8, st));
      MGK_CUDA_TRY(ctx, cudaMemsetAsync(recv_value + received * H, 0, size_t(capacity - received) * row_bytes, st));
    }
    // From pageable memory: staged before the call returns, so `received` may change after.
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(out[2].data, &received, 8, cudaMemcpyHostToDevice, st));
    return 0;
  }

  // The pairs this rank owns, by a host walk over every rank's ids in order: rank s's ids
  // are regenerated on the device (as the harness drew them: the zipf draw's pow() must be
  // the device's), read back, and each one with id mod W == this rank is appended with its
  // source (s, i). Expected recv_idx: those ids, then zeros; recv_value: rank s's value row
  // i for each, regenerated on the device, then zeros; recv_count: how many.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int W = world(), r = rank();
    const int64_t H = this->H;  // by value into the device lambdas
    std::vector<int64_t> first(W + 1, 0);
    for (int s = 0; s < W; ++s) first[s + 1] = first[s] + NA + ND * ((s + S) % 3);
    const int64_t total = first[W];
    if (total != a->outputs[0].shape[0] || a->outputs[0].shape[0] != a->outputs[1].shape[0])
      return mgk::set_error(ctx, "oracle: the ranks' NNZ add up to %lld, recv_idx has %lld rows", (long long)total,
                            (long long)a->outputs[0].shape[0]);
    mgk::oracle::Scratch scratch(st);
    int64_t* d_ids = scratch.get<int64_t>(total);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    const mgk_input_gen gids = a->gens[0];
    for (int s = 0; s < W; ++s) {
      int64_t* dst = d_ids + first[s];
      MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                            first[s + 1] - first[s],
                            [=] __device__(int64_t i) { dst[i] = int64_t(mgk::gen_value(gids, s, i)); }, st));
    }
    std::vector<int64_t> ids(total);
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(ids.data(), d_ids, size_t(total) * 8, cudaMemcpyDeviceToHost, st));
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));

    std::vector<int64_t> want_idx(total, 0);
    std::vector<int> src_rank;
    std::vector<int64_t> src_row;
    for (int s = 0; s < W; ++s)
      for (int64_t i = 0; i < first[s + 1] - first[s]; ++i) {
        const int64_t id = ids[first[s] + i];
        if (id < 0 || id >= N) return mgk::set_error(ctx, "oracle: rank %d's id %lld outside [0, N)", s, (long long)id);
        if (id % W != r) continue;
        want_idx[src_rank.size()] = id;
        src_rank.push_back(s);
        src_row.push_back(i);
      }
    const int64_t count = int64_t(src_rank.size());
    const int64_t rows = std::max<int64_t>(count, 1);
    int* d_rank = scratch.get<int>(rows);
    int64_t* d_row = scratch.get<int64_t>(rows);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    if (count > 0) {
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d_rank, src_rank.data(), size_t(count) * sizeof(int), cudaMemcpyHostToDevice, st));
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d_row, src_row.data(), size_t(count) * 8, cudaMemcpyHostToDevice, st));
    }
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(a->expected[0], want_idx.data(), size_t(total) * 8, cudaMemcpyHostToDevice, st));
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(static_cast<double*>(a->expected[1]) + count * H, 0,
                                      size_t(total - count) * size_t(H) * sizeof(double), st));
    MGK_CUDA_TRY(ctx, mgk::oracle::copy(
                          a->gens[1],
                          [=] __device__(int64_t i) {
                            const int64_t k = i / H;
                            return mgk::oracle::Source{d_rank[k], d_row[k] * H + i % H};
                          },
                          a->expected[1], count * H, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(a->expected[2], &count, 8, cudaMemcpyHostToDevice, st));
    // The host vectors must outlive the copies.
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(SparseEmbeddingAll2All)
