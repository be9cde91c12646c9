// Reference, as ParallelKernelBench's: this rank's indices are sorted stably by owning rank
// (CUB radix sort on the owner), NCCL exchanges the per-owner counts, the host reads them
// (a synchronisation, as PyTorch's .tolist() is), NCCL sends each owner its indices, every
// owner gathers the rows asked of it, and NCCL sends them back; they land in owner order.
#include <cub/cub.cuh>

#include <algorithm>
#include <vector>

#include "mgk/reference_kit.h"

namespace {

int bits_for(int w) {
  int b = 1;
  while ((1 << b) < w) ++b;
  return b;
}

// owner[i] = idx[i] / VL, and counts[owner] += 1 (counts zeroed before).
__global__ void owners_kernel(const int64_t* idx, int64_t n, int64_t vl, int* owner, int64_t* counts) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int o = int(idx[i] / vl);
    owner[i] = o;
    atomicAdd(reinterpret_cast<unsigned long long*>(counts + o), 1ull);
  }
}

// out row i = table row (idx[i] - base), clamped to the table as ParallelKernelBench clamps;
// 16-byte vectors when a row is a multiple of 8 elements.
template <bool kVec>
__global__ void gather_kernel(const int64_t* idx, int64_t n, int64_t base, int64_t rows, const __nv_bfloat16* table,
                              int64_t d, __nv_bfloat16* out) {
  const int64_t per_row = kVec ? d / 8 : d;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n * per_row; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / per_row, c = i % per_row;
    const int64_t src = std::min<int64_t>(std::max<int64_t>(idx[r] - base, 0), rows - 1);
    if (kVec) reinterpret_cast<uint4*>(out + r * d)[c] = reinterpret_cast<const uint4*>(table + src * d)[c];
    else out[r * d + c] = table[src * d + c];
  }
}

cudaError_t gather(const int64_t* idx, int64_t n, int64_t base, int64_t rows, const void* table, int64_t d, void* out,
                   cudaStream_t st) {
  if (n == 0) return cudaSuccess;
  const bool vec = d % 8 == 0;
  const int64_t work = n * (vec ? d / 8 : d);
  const int blocks = int(std::min<int64_t>((work + 255) / 256, 16384));
  const auto* t = static_cast<const __nv_bfloat16*>(table);
  auto* o = static_cast<__nv_bfloat16*>(out);
  if (vec) gather_kernel<true><<<blocks, 256, 0, st>>>(idx, n, base, rows, t, d, o);
  else gather_kernel<false><<<blocks, 256, 0, st>>>(idx, n, base, rows, t, d, o);
  return cudaGetLastError();
}

struct EmbeddingLookup : mgk::Reference {
  using Reference::Reference;
  const int64_t T = dim("T"), D = dim("D"), VL = dim("VL");
  const int64_t rows = ctx->inputs[1].shape[0];  // this rank's table rows
  mgk::DeviceBuffer<int> owner;             // T: owner of each index, then sorted (keys)
  mgk::DeviceBuffer<int> owner_sorted;
  mgk::DeviceBuffer<int64_t> sorted;        // T: the indices in owner order
  mgk::DeviceBuffer<int64_t> counts;        // 2W: sent to each owner, received from each rank
  mgk::DeviceBuffer<int64_t> received;      // W T: indices asked of this rank
  mgk::DeviceBuffer<__nv_bfloat16> gathered;  // the rows asked of this rank, grown on demand
  int64_t gathered_rows = 0;
  mgk::DeviceBuffer<char> sort_temp;
  size_t sort_temp_bytes = 0;
  std::vector<int64_t> host_counts;

  int setup() {
    const int W = world();
    MGK_CUDA_TRY(ctx, owner.allocate(std::max<int64_t>(T, 1)));
    MGK_CUDA_TRY(ctx, owner_sorted.allocate(std::max<int64_t>(T, 1)));
    MGK_CUDA_TRY(ctx, sorted.allocate(std::max<int64_t>(T, 1)));
    MGK_CUDA_TRY(ctx, counts.allocate(2 * W));
    MGK_CUDA_TRY(ctx, received.allocate(std::max<int64_t>(W * T, 1)));
    gathered_rows = std::max<int64_t>(2 * T, 1);
    MGK_CUDA_TRY(ctx, gathered.allocate(gathered_rows * D));
    MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(nullptr, sort_temp_bytes, owner.get(), owner_sorted.get(),
                                                      static_cast<const int64_t*>(nullptr), sorted.get(), int(T), 0,
                                                      bits_for(W)));
    MGK_CUDA_TRY(ctx, sort_temp.allocate(std::max<size_t>(sort_temp_bytes, 16)));
    host_counts.resize(2 * W);
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int W = world();
    const auto* idx = static_cast<const int64_t*>(in[0].data);
    int64_t* send_counts = counts;
    int64_t* recv_counts = counts + W;
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(send_counts, 0, size_t(W) * 8, st));
    const int blocks = int(std::min<int64_t>((T + 255) / 256, 4096));
    owners_kernel<<<std::max(blocks, 1), 256, 0, st>>>(idx, T, VL, owner, send_counts);
    MGK_LAUNCH_CHECK(ctx);
    size_t temp = sort_temp_bytes;  // a stable sort: within an owner the indices keep their order
    MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(sort_temp.get(), temp, owner.get(), owner_sorted.get(), idx,
                                                      sorted.get(), int(T), 0, bits_for(W), st));
    const ncclComm_t group = comm();
    if (!group) {  // bench/compute: the compute part alone, as if every index were this rank's
      MGK_CUDA_TRY(ctx, gather(sorted, T, int64_t(rank()) * VL, rows, in[1].data, D, out[0].data, st));
      return 0;
    }
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    for (int p = 0; p < W; ++p) {
      MGK_NCCL_TRY(ctx, ncclSend(send_counts + p, 1, ncclInt64, p, group, st));
      MGK_NCCL_TRY(ctx, ncclRecv(recv_counts + p, 1, ncclInt64, p, group, st));
    }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(host_counts.data(), counts, size_t(2 * W) * 8, cudaMemcpyDeviceToHost, st));
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
    const int64_t* sent = host_counts.data();
    const int64_t* got = sent + W;
    int64_t total = 0;
    for (int p = 0; p < W; ++p) total += got[p];
    if (total > gathered_rows) {
      gathered_rows = total;
      MGK_CUDA_TRY(ctx, gathered.allocate(total * D));
    }
    const size_t row_bytes = size_t(D) * 2;
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    for (int64_t p = 0, send_at = 0, recv_at = 0; p < W; send_at += sent[p], recv_at += got[p], ++p) {
      MGK_NCCL_TRY(ctx, ncclSend(sorted + send_at, sent[p], ncclInt64, int(p), group, st));
      MGK_NCCL_TRY(ctx, ncclRecv(received + recv_at, got[p], ncclInt64, int(p), group, st));
    }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());
    MGK_CUDA_TRY(ctx, gather(received, total, int64_t(rank()) * VL, rows, in[1].data, D, gathered, st));
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    for (int64_t p = 0, send_at = 0, recv_at = 0; p < W; send_at += got[p], recv_at += sent[p], ++p) {
      MGK_NCCL_TRY(ctx, ncclSend(reinterpret_cast<char*>(gathered.get()) + send_at * row_bytes, got[p] * D,
                                 ncclBfloat16, int(p), group, st));
      MGK_NCCL_TRY(ctx, ncclRecv(static_cast<char*>(out[0].data) + recv_at * row_bytes, sent[p] * D, ncclBfloat16,
                                 int(p), group, st));
    }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());
    return 0;
  }

  // Row i of the output = the table row of the i-th index in owner order, exactly: the
  // indices are regenerated on the host (integers, so exactly as stored) and partitioned
  // stably by owner; every row's elements come from the owner's regenerated table.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int64_t D = this->D, VL = this->VL;  // by value into the device lambda
    std::vector<int64_t> order;
    order.reserve(T);
    for (int p = 0; p < world(); ++p)
      for (int64_t i = 0; i < T; ++i) {
        const int64_t v = int64_t(mgk::gen_value(a->gens[0], rank(), i));
        if (v / VL == p) order.push_back(v);
      }
    if (int64_t(order.size()) != T) return mgk::set_error(ctx, "oracle: an index outside [0, W VL)");
    mgk::oracle::Scratch scratch(st);
    int64_t* ids = scratch.get<int64_t>(T);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(ids, order.data(), size_t(T) * 8, cudaMemcpyHostToDevice, st));
    const mgk_input_gen table = a->gens[1];
    auto* expected = static_cast<double*>(a->expected[0]);
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          T * D,
                          [=] __device__(int64_t i) {
                            const int64_t id = ids[i / D];
                            expected[i] = mgk::gen_value(table, int(id / VL), (id % VL) * D + i % D);
                          },
                          st));
    // The host vector must outlive the copy.
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(EmbeddingLookup)
