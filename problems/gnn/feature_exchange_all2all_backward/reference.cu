// Reference: the backward of DGL's cooperative feature exchange at library speed. One NCCL
// group sends grad_output's chunk k to rank (r + k) mod W and receives chunk c from rank
// (r + c) mod W into a receive buffer (the rank's own chunk 0 stays where it is); then a
// scatter-add kernel adds every received row into grad_seed[seed_inverse_ids[i]] with fp32
// atomics, as torch's index_add_ does (ParallelKernelBench multiplies a sparse COO matrix
// of ones with the received rows; the sum is the same, its order is free).
#include <algorithm>

#include "../feature_exchange.cuh"

namespace {

// grad_seed[ids[i]] += row i, for i < rows: rows below `own` (the rank's own chunk) read from
// grad_output, the others from the receive buffer (both indexed by i).
__global__ void scatter_add_kernel(const int64_t* ids, int64_t rows, int64_t own, const float* grad_output,
                                   const float* received, int64_t h, float* grad_seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * h; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / h, c = i % h;
    const float v = (r < own ? grad_output : received)[i];
    atomicAdd(grad_seed + ids[r] * h + c, v);
  }
}

struct FeatureExchangeAll2AllBackward : gnn::FeatureExchange {
  using FeatureExchange::FeatureExchange;
  const int64_t SEED = dim("SEED");
  mgk::DeviceBuffer<float> received;  // the received rows, in the shifted chunk order (chunk 0's rows unused)

  int setup() {
    if (int rc = check_shapes(ctx->inputs[0].shape[0], ctx->inputs[1].shape[0])) return rc;
    MGK_CUDA_TRY(ctx, received.allocate(std::max<int64_t>(layout.received * H, 4)));
    // bench/compute (no communicator) adds the buffer as it stands: defined values.
    MGK_CUDA_TRY(ctx, cudaMemset(received, 0, size_t(std::max<int64_t>(layout.received * H, 4)) * sizeof(float)));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int W = world(), r = rank();
    const auto [grad, ids] = mgk::tensor_data<const float, const int64_t>(in);
    auto* grad_seed = static_cast<float*>(out[0].data);
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(grad_seed, 0, size_t(SEED * H) * sizeof(float), st));
    if (comm()) {
      MGK_NCCL_TRY(ctx, ncclGroupStart());
      for (int k = 1; k < W; ++k) {  // chunk k: to rank (r + k) mod W; chunk k received: from rank (r + k) mod W
        // Both sides of a pair read the same n(s, d), so a zero-row pair is skipped on both.
        if (layout.send_count[k] > 0)
          MGK_NCCL_TRY(ctx, ncclSend(grad + layout.send_at[k] * H, size_t(layout.send_count[k] * H), ncclFloat32,
                                     (r + k) % W, comm(), st));
        if (layout.recv_count[k] > 0)
          MGK_NCCL_TRY(ctx, ncclRecv(received + layout.recv_at[k] * H, size_t(layout.recv_count[k] * H), ncclFloat32,
                                     (r + k) % W, comm(), st));
      }
      MGK_NCCL_TRY(ctx, ncclGroupEnd());
    }
    const int64_t rows = layout.received;
    if (rows > 0) {
      const int blocks = int(std::min<int64_t>((rows * H + 255) / 256, 16384));
      scatter_add_kernel<<<blocks, 256, 0, st>>>(ids, rows, layout.recv_count[0], grad, received, H, grad_seed);
      MGK_LAUNCH_CHECK(ctx);
    }
    return 0;
  }

  // grad_seed[j] = the exact sum of the received rows i with seed_inverse_ids[i] = j. Received
  // row i lies in chunk c (rows [sum_{c' < c} n((r + c') mod W, r), ...)), which rank
  // s = (r + c) mod W sent as its chunk (W - c) mod W: it is s's grad_output row (sum over
  // k' < (W - c) mod W of n(s, (s + k') mod W)) + (i - chunk start). The ids are regenerated on
  // the host (integers, as stored) and bucketed by seed row; the rows' values on the device.
  //
  // Rounding: a row with c terms is c - 1 fp32 additions in some order (atomics, a sorted
  // segment sum, a sparse product: the order is free), each rounding a partial sum of at
  // most sum |terms|: at most (c - 1) u32 sum |terms| in any order, or with the suite's
  // probabilistic allowance (Higham & Mary: 4 sqrt(c - 1) when smaller) the scale is
  // fp32_accumulation(c - 1) sum |terms|, in units of u32 (the output's u). The factor 2 of the
  // spec is margin. A row of one term is its copy (scale 0: exact), a row of none is 0.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int W = world(), r = rank();
    const int64_t H = this->H;  // by value into the device lambda
    const int64_t rows = a->inputs[1].shape[0], seeds = a->outputs[0].shape[0];
    std::vector<int> src_rank;
    std::vector<int64_t> src_row;
    for (int c = 0; c < W; ++c) {
      const int s = (r + c) % W, k = (W - c) % W;
      int64_t first = 0;  // where chunk k starts in rank s's grad_output
      for (int kk = 0; kk < k; ++kk) first += counts.n(s, (s + kk) % W);
      for (int64_t t = 0; t < counts.n(s, r); ++t) {
        src_rank.push_back(s);
        src_row.push_back(first + t);
      }
    }
    if (int64_t(src_rank.size()) != rows)
      return mgk::set_error(ctx, "oracle: the counts give %lld received rows, seed_inverse_ids has %lld",
                            (long long)src_rank.size(), (long long)rows);
    // Bucket the received rows by seed row (a counting sort): start[j] .. start[j + 1].
    std::vector<int64_t> id(rows), start(seeds + 1, 0);
    for (int64_t i = 0; i < rows; ++i) {
      const double v = mgk::gen_value(a->gens[1], r, i);
      if (v < 0 || v >= double(seeds)) return mgk::set_error(ctx, "oracle: a seed_inverse_id outside [0, SEED)");
      id[i] = int64_t(v);
      ++start[id[i] + 1];
    }
    for (int64_t j = 0; j < seeds; ++j) start[j + 1] += start[j];
    std::vector<int> term_rank(std::max<int64_t>(rows, 1));
    std::vector<int64_t> term_row(std::max<int64_t>(rows, 1)), fill(start.begin(), start.end() - 1);
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t at = fill[id[i]]++;
      term_rank[at] = src_rank[i];
      term_row[at] = src_row[i];
    }
    mgk::oracle::Scratch scratch(st);
    int* d_rank = scratch.get<int>(rows);
    int64_t* d_row = scratch.get<int64_t>(rows);
    int64_t* d_start = scratch.get<int64_t>(seeds + 1);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d_rank, term_rank.data(), size_t(rows) * sizeof(int), cudaMemcpyHostToDevice, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d_row, term_row.data(), size_t(rows) * 8, cudaMemcpyHostToDevice, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d_start, start.data(), size_t(seeds + 1) * 8, cudaMemcpyHostToDevice, st));
    const mgk_input_gen grad = a->gens[0];
    const auto [expected, scale] = mgk::oracle_output(a, 0);
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          seeds * H,
                          [=] __device__(int64_t i) {
                            const int64_t j = i / H, col = i % H;
                            double sum = 0, mag = 0;
                            for (int64_t e = d_start[j]; e < d_start[j + 1]; ++e) {
                              const double v = mgk::gen_value(grad, d_rank[e], d_row[e] * H + col);
                              sum += v;
                              mag += fabs(v);
                            }
                            const int64_t terms = d_start[j + 1] - d_start[j];
                            expected[i] = sum;
                            if (scale)
                              scale[i] = float(mgk::oracle::fp32_accumulation(terms > 1 ? terms - 1 : 0,
                                                                              mgk::oracle::kF32U) * mag);
                          },
                          st));
    // The host vectors must outlive the copies.
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(FeatureExchangeAll2AllBackward)
