// Reference: TorchRec's KJT all-to-all at library speed, with the recat folded into the
// exchange. CUB's segmented reduce sums each feature's lengths (its value count); NCCL sends
// each rank the value counts of its features (k_d per peer; ParallelKernelBench sends 3
// int64 a peer, two of which are constants of the dims) and the host reads them (a
// synchronisation, as ParallelKernelBench's .item() and .tolist() are). Knowing the value
// count of every (source, feature) segment, the host computes where each lands in this
// rank's feature-major output, and one NCCL group sends every destination its features
// (lengths and values, one message each per feature) and receives every source's straight
// into place: the recatenation costs no pass of its own (ParallelKernelBench receives
// source-major and then permutes lengths and values segment by segment). The own features
// are device copies; the tail of values_out is zeroed, and the filled length written.
#include <cub/cub.cuh>

#include <algorithm>
#include <vector>

#include "mgk/reference_kit.h"

namespace {

struct KjtAll2All : mgk::Reference {
  using Reference::Reference;
  const int64_t B = dim("B"), LMIN = dim("LMIN"), LMAX = dim("LMAX"), F = dim("F");
  std::vector<int64_t> k, o;  // k_d = 1 + d % 3 features of rank d, from o_d
  int64_t kr = 0;             // this rank's
  int64_t capacity = 0;       // of values_out
  mgk::DeviceBuffer<int> feature_at;    // F + 1: feature f's lengths start at f B
  mgk::DeviceBuffer<int64_t> totals;    // F: the value count of each of this rank's features
  mgk::DeviceBuffer<int64_t> received;  // W k_R: the value count of (source s, local feature f) at s k_R + f
  mgk::DeviceBuffer<char> reduce_temp;
  size_t reduce_temp_bytes = 0;
  std::vector<int64_t> host_totals, host_received;
  int64_t count = 0;  // the filled length, copied to values_count

  int setup() {
    const int W = world();
    o.assign(W + 1, 0);
    for (int d = 0; d < W; ++d) {
      k.push_back(1 + d % 3);
      o[d + 1] = o[d] + k[d];
    }
    kr = k[rank()];
    capacity = ctx->outputs[1].shape[0];
    if (o[W] != F || ctx->inputs[0].shape[0] != F * B || ctx->outputs[0].shape[0] != kr * W * B ||
        capacity != kr * W * B * LMAX)
      return mgk::set_error(ctx, "the spec's shapes do not follow k_d = 1 + d %% 3 (F = %lld, sum of k_d = %lld)",
                            (long long)F, (long long)o[W]);
    std::vector<int> at(F + 1);
    for (int64_t f = 0; f <= F; ++f) at[f] = int(f * B);
    MGK_CUDA_TRY(ctx, feature_at.allocate(F + 1));
    MGK_CUDA_TRY(ctx, cudaMemcpy(feature_at.get(), at.data(), size_t(F + 1) * sizeof(int), cudaMemcpyHostToDevice));
    MGK_CUDA_TRY(ctx, totals.allocate(F));
    MGK_CUDA_TRY(ctx, received.allocate(W * kr));
    MGK_CUDA_TRY(ctx, cub::DeviceSegmentedReduce::Sum(nullptr, reduce_temp_bytes, static_cast<const int64_t*>(nullptr),
                                                      totals.get(), int(F), feature_at.get(), feature_at.get() + 1));
    MGK_CUDA_TRY(ctx, reduce_temp.allocate(std::max<size_t>(reduce_temp_bytes, 16)));
    host_totals.resize(F);
    host_received.resize(W * kr);
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int W = world(), r = rank();
    const auto [lengths, values] = mgk::tensor_data<const int64_t, const int64_t>(in);
    const auto [lengths_out, values_out] = mgk::tensor_data<int64_t, int64_t>(out);

    // Each feature's value count.
    size_t temp = reduce_temp_bytes;
    MGK_CUDA_TRY(ctx, cub::DeviceSegmentedReduce::Sum(reduce_temp.get(), temp, lengths, totals.get(), int(F),
                                                      feature_at.get(), feature_at.get() + 1, st));
    const ncclComm_t group = comm();
    if (!group) return 0;  // bench/compute: the counts alone

    // The count exchange: rank d gets the counts of its k_d features (the own ones by a
    // device copy); the host reads them.
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(received + r * kr, totals + o[r], size_t(kr) * 8, cudaMemcpyDeviceToDevice, st));
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    for (int p = 0; p < W; ++p) {
      if (p == r) continue;
      MGK_NCCL_TRY(ctx, ncclSend(totals + o[p], size_t(k[p]), ncclInt64, p, group, st));
      MGK_NCCL_TRY(ctx, ncclRecv(received + p * kr, size_t(kr), ncclInt64, p, group, st));
    }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(host_totals.data(), totals, size_t(F) * 8, cudaMemcpyDeviceToHost, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(host_received.data(), received, size_t(W * kr) * 8, cudaMemcpyDeviceToHost, st));
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));

    // Where feature f's values start in this rank's values (send_at), and where segment
    // (local feature f, source s) lands in values_out (land_at[f W + s]): feature-major,
    // then source.
    std::vector<int64_t> send_at(F + 1, 0), land_at(kr * W + 1, 0);
    for (int64_t f = 0; f < F; ++f) send_at[f + 1] = send_at[f] + host_totals[f];
    for (int64_t f = 0; f < kr; ++f)
      for (int s = 0; s < W; ++s) land_at[f * W + s + 1] = land_at[f * W + s] + host_received[s * kr + f];
    count = land_at[kr * W];
    if (send_at[F] > F * B * LMAX || count > capacity)
      return mgk::set_error(ctx, "value counts: %lld sent of a capacity %lld, %lld received into %lld",
                            (long long)send_at[F], (long long)(F * B * LMAX), (long long)count, (long long)capacity);

    // The own features, by device copies.
    for (int64_t f = 0; f < kr; ++f) {
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(lengths_out + (f * W + r) * B, lengths + (o[r] + f) * B, size_t(B) * 8,
                                        cudaMemcpyDeviceToDevice, st));
      const int64_t n = host_totals[o[r] + f];
      if (n > 0)
        MGK_CUDA_TRY(ctx, cudaMemcpyAsync(values_out + land_at[f * W + r], values + send_at[o[r] + f], size_t(n) * 8,
                                          cudaMemcpyDeviceToDevice, st));
    }
    // Every peer's: per feature its B lengths and its values (none when the count is zero,
    // which both sides know), in the same order on both sides.
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    for (int p = 0; p < W; ++p) {
      if (p == r) continue;
      for (int64_t f = o[p]; f < o[p + 1]; ++f) {
        MGK_NCCL_TRY(ctx, ncclSend(lengths + f * B, size_t(B), ncclInt64, p, group, st));
        if (host_totals[f] > 0)
          MGK_NCCL_TRY(ctx, ncclSend(values + send_at[f], size_t(host_totals[f]), ncclInt64, p, group, st));
      }
      for (int64_t f = 0; f < kr; ++f) {
        MGK_NCCL_TRY(ctx, ncclRecv(lengths_out + (f * W + p) * B, size_t(B), ncclInt64, p, group, st));
        const int64_t n = host_received[p * kr + f];
        if (n > 0) MGK_NCCL_TRY(ctx, ncclRecv(values_out + land_at[f * W + p], size_t(n), ncclInt64, p, group, st));
      }
    }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());

    // The tail beyond the filled length is zeros; the length itself (from pageable memory:
    // staged before the call returns).
    if (count < capacity)
      MGK_CUDA_TRY(ctx, cudaMemsetAsync(values_out + count, 0, size_t(capacity - count) * 8, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(out[2].data, &count, 8, cudaMemcpyHostToDevice, st));
    return 0;
  }

  // Every rank's lengths up to the end of this rank's features are regenerated on the device
  // (as the harness drew them: the zipf draw's pow() must be the device's) and read back;
  // the host walks them to give every output bag (f, s, b), in output order, its length, its
  // first id in rank s's values (the sum of rank s's lengths before bag (o_R + f, b)) and
  // its first place in values_out (the sum of the output lengths before it). A device
  // kernel then regenerates each bag's ids from rank s's values; the rest is zeros.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int W = world(), r = rank();
    const int64_t B = this->B, head = (o[r] + kr) * B;  // the lengths of rank s that matter
    mgk::oracle::Scratch scratch(st);
    int64_t* d_len = scratch.get<int64_t>(W * head);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    const mgk_input_gen glen = a->gens[0], gval = a->gens[1];
    for (int s = 0; s < W; ++s) {
      int64_t* dst = d_len + s * head;
      MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                            head, [=] __device__(int64_t i) { dst[i] = int64_t(mgk::gen_value(glen, s, i)); }, st));
    }
    std::vector<int64_t> len(W * head);
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(len.data(), d_len, size_t(W * head) * 8, cudaMemcpyDeviceToHost, st));
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
    for (int64_t v : len)
      if (v < LMIN || v > LMAX) return mgk::set_error(ctx, "oracle: a length %lld outside [LMIN, LMAX]", (long long)v);

    // start[s * kr + f]: where rank s's feature o_R + f starts in its values.
    std::vector<int64_t> start(W * kr, 0);
    for (int s = 0; s < W; ++s) {
      int64_t at = 0;
      for (int64_t f = 0; f < o[r] + kr; ++f) {
        if (f >= o[r]) start[s * kr + (f - o[r])] = at;
        for (int64_t b = 0; b < B; ++b) at += len[s * head + f * B + b];
      }
    }
    const int64_t bags = kr * W * B;
    std::vector<int64_t> want_len(bags), from(bags), to(bags);
    std::vector<int> src(bags);
    int64_t total = 0;
    for (int64_t f = 0; f < kr; ++f)
      for (int s = 0; s < W; ++s) {
        int64_t at = start[s * kr + f];
        for (int64_t b = 0; b < B; ++b) {
          const int64_t j = (f * W + s) * B + b, n = len[s * head + (o[r] + f) * B + b];
          want_len[j] = n;
          src[j] = s;
          from[j] = at;
          to[j] = total;
          at += n;
          total += n;
        }
      }
    const int64_t cap = a->outputs[1].numel;
    if (a->outputs[0].numel != bags || total > cap)
      return mgk::set_error(ctx, "oracle: %lld bags and %lld ids for outputs of %lld and %lld", (long long)bags,
                            (long long)total, (long long)a->outputs[0].numel, (long long)cap);
    int* d_src = scratch.get<int>(bags);
    int64_t* d_from = scratch.get<int64_t>(bags);
    int64_t* d_to = scratch.get<int64_t>(bags);
    int64_t* d_n = scratch.get<int64_t>(bags);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d_src, src.data(), size_t(bags) * sizeof(int), cudaMemcpyHostToDevice, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d_from, from.data(), size_t(bags) * 8, cudaMemcpyHostToDevice, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d_to, to.data(), size_t(bags) * 8, cudaMemcpyHostToDevice, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d_n, want_len.data(), size_t(bags) * 8, cudaMemcpyHostToDevice, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(a->expected[0], want_len.data(), size_t(bags) * 8, cudaMemcpyHostToDevice, st));
    auto* want_values = static_cast<int64_t*>(a->expected[1]);
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(want_values, 0, size_t(cap) * 8, st));
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          bags,
                          [=] __device__(int64_t j) {
                            for (int64_t t = 0; t < d_n[j]; ++t)
                              want_values[d_to[j] + t] = int64_t(mgk::gen_value(gval, d_src[j], d_from[j] + t));
                          },
                          st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(a->expected[2], &total, 8, cudaMemcpyHostToDevice, st));
    // The host vectors must outlive the copies.
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(KjtAll2All)
