// Reference: DGL's cooperative feature exchange at library speed. One kernel gathers
// local_features[seed_inverse_ids] row by row, this rank's own chunk (chunk 0) straight into
// its place in the output and every other chunk into a send buffer in the shifted chunk
// order; then one NCCL group sends chunk k to rank (r + k) mod W and receives chunk c from
// rank (r + c) mod W straight into its rows of the output. The counts are a formula of the
// ranks and the dims (no count exchange, no host sync); ParallelKernelBench's PyTorch code
// gathers into a new tensor and calls all_to_all over the rotated chunk lists.
#include <algorithm>
#include <vector>

#include "../feature_exchange.cuh"

namespace {

// dst row i = table row ids[i] for i < rows: rows below `own` (the rank's own chunk) go to
// `own_dst`, the others to `send` (both indexed by i). kVec: rows of whole 16-byte words.
template <bool kVec>
__global__ void gather_kernel(const int64_t* ids, int64_t rows, int64_t own, const __nv_bfloat16* table, int64_t h,
                              __nv_bfloat16* own_dst, __nv_bfloat16* send) {
  const int64_t per_row = kVec ? h / 8 : h;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * per_row;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / per_row, c = i % per_row;
    const __nv_bfloat16* src = table + ids[r] * h;
    __nv_bfloat16* dst = (r < own ? own_dst : send) + r * h;
    if (kVec) reinterpret_cast<uint4*>(dst)[c] = reinterpret_cast<const uint4*>(src)[c];
    else dst[c] = src[c];
  }
}

struct FeatureExchangeAll2All : gnn::FeatureExchange {
  using FeatureExchange::FeatureExchange;
  mgk::DeviceBuffer<__nv_bfloat16> send;  // the gathered rows of chunks 1..W-1 (rows as in the gathered order)

  int setup() {
    if (int rc = check_shapes(ctx->inputs[1].shape[0], ctx->outputs[0].shape[0])) return rc;
    MGK_CUDA_TRY(ctx, send.allocate(std::max<int64_t>(layout.sent * H, 8)));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int W = world(), r = rank();
    const auto [table, ids] = mgk::tensor_data<const __nv_bfloat16, const int64_t>(in);
    auto* y = static_cast<__nv_bfloat16*>(out[0].data);
    const int64_t rows = layout.sent;
    if (rows > 0) {
      const bool vec = H % 8 == 0;
      const int64_t work = rows * (vec ? H / 8 : H);
      const int blocks = int(std::min<int64_t>((work + 255) / 256, 16384));
      if (vec) gather_kernel<true><<<blocks, 256, 0, st>>>(ids, rows, layout.send_count[0], table, H, y, send);
      else gather_kernel<false><<<blocks, 256, 0, st>>>(ids, rows, layout.send_count[0], table, H, y, send);
      MGK_LAUNCH_CHECK(ctx);
    }
    if (!comm()) return 0;  // bench/compute: the gather alone
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    for (int k = 1; k < W; ++k) {  // chunk k: to rank (r + k) mod W; chunk k received: from rank (r + k) mod W
      // Both sides of a pair read the same n(s, d), so a zero-row pair is skipped on both.
      if (layout.send_count[k] > 0)
        MGK_NCCL_TRY(ctx, ncclSend(send + layout.send_at[k] * H, size_t(layout.send_count[k] * H), ncclBfloat16,
                                   (r + k) % W, comm(), st));
      if (layout.recv_count[k] > 0)
        MGK_NCCL_TRY(ctx, ncclRecv(y + layout.recv_at[k] * H, size_t(layout.recv_count[k] * H), ncclBfloat16,
                                   (r + k) % W, comm(), st));
    }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());
    return 0;
  }

  // Exact: output row j of this rank is, for the chunk c holding it (rows
  // [sum_{c' < c} n((r + c') mod W, r), ...)), row t = j - (chunk start) of the chunk that
  // rank s = (r + c) mod W sends to r, i.e. s's gathered row (sum over the chunks k' < (W - c)
  // mod W of n(s, (s + k') mod W)) + t; that row is s's local_features row
  // seed_inverse_ids_s[that row]. Both are regenerated (ids as integers, exactly as stored).
  // The table is built here by its own loops over (source, destination), not by the
  // reference's layout.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int W = world(), r = rank();
    const int64_t H = this->H, F = a->inputs[0].shape[0];  // by value into the device lambda
    std::vector<int> src_rank;
    std::vector<int64_t> src_row;
    for (int c = 0; c < W; ++c) {
      const int s = (r + c) % W, k = (W - c) % W;
      int64_t first = 0;  // where chunk k starts in rank s's gathered rows
      for (int kk = 0; kk < k; ++kk) first += counts.n(s, (s + kk) % W);
      for (int64_t t = 0; t < counts.n(s, r); ++t) {
        src_rank.push_back(s);
        src_row.push_back(first + t);
      }
    }
    const int64_t rows = a->outputs[0].shape[0];
    if (int64_t(src_rank.size()) != rows)
      return mgk::set_error(ctx, "oracle: the counts give %lld rows, the output has %lld", (long long)src_rank.size(),
                            (long long)rows);
    mgk::oracle::Scratch scratch(st);
    int* d_rank = scratch.get<int>(rows);
    int64_t* d_row = scratch.get<int64_t>(rows);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d_rank, src_rank.data(), size_t(rows) * sizeof(int), cudaMemcpyHostToDevice, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d_row, src_row.data(), size_t(rows) * 8, cudaMemcpyHostToDevice, st));
    const mgk_input_gen gids = a->gens[1];
    int bad_id = 0;
    for (int64_t j = 0; j < rows && !bad_id; ++j) {  // the ids must index the table (the spec's randint range)
      const double id = mgk::gen_value(gids, src_rank[j], src_row[j]);
      bad_id = id < 0 || id >= double(F);
    }
    if (bad_id) return mgk::set_error(ctx, "oracle: a seed_inverse_id outside [0, F)");
    MGK_CUDA_TRY(ctx, mgk::oracle::copy(
                          a->gens[0],
                          [=] __device__(int64_t i) {
                            const int64_t j = i / H;
                            const int s = d_rank[j];
                            const int64_t id = int64_t(mgk::gen_value(gids, s, d_row[j]));
                            return mgk::oracle::Source{s, id * H + i % H};
                          },
                          a->expected[0], rows * H, st));
    // The host vectors must outlive the copies.
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(FeatureExchangeAll2All)
