// Reference: ParallelKernelBench's variable-length all-gather at library speed. PKB
// all-gathers every rank's shape, syncs the host to size the receive buffers, all-gathers
// the tensors into a list and concatenates it along dimension 0. Here the shapes are fixed
// for a size preset (the harness gives each rank its own at setup), so the shape
// all-gather and its host sync run once, in mgk_setup, with NCCL; every call is then one
// NCCL group in which each rank sends its x to every rank and receives rank s's rows
// straight into their place in y (dimension-0 concatenation is contiguous: no copy).
#include <vector>

#include "mgk/reference_kit.h"

namespace {

struct AllGatherVariable : mgk::Reference {
  using Reference::Reference;
  const int64_t M = dim("M"), DM = dim("DM");
  std::vector<int64_t> rows, first;  // per rank: M_s, and the first row of y that is rank s's

  int setup() {
    if (int rc = gather_rows(ctx->inputs[0].shape[0])) return rc;
    first.assign(world() + 1, 0);
    for (int p = 0; p < world(); ++p) first[p + 1] = first[p] + rows[p];
    if (comm() && first.back() != ctx->outputs[0].shape[0])
      return mgk::set_error(ctx, "the ranks' rows add up to %lld, y has %lld", (long long)first.back(),
                            (long long)ctx->outputs[0].shape[0]);
    return 0;
  }

  // Every rank's number of rows, gathered with NCCL (the lengths are not known otherwise).
  // Without a communicator (bench/compute times the local part alone) only this rank's is
  // known; the others are taken to be equal to it, which only moves where its rows land.
  int gather_rows(int64_t mine) {
    const int w = world();
    rows.assign(w, mine);
    if (!comm()) return 0;
    mgk::DeviceBuffer<int64_t> d;
    mgk::Stream st;
    MGK_CUDA_TRY(ctx, d.allocate(w));
    MGK_CUDA_TRY(ctx, cudaStreamCreateWithFlags(st.out(), cudaStreamNonBlocking));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d + rank(), &mine, sizeof mine, cudaMemcpyHostToDevice, st));
    MGK_NCCL_TRY(ctx, ncclAllGather(d + rank(), d, 1, ncclInt64, comm(), st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(rows.data(), d, sizeof(int64_t) * w, cudaMemcpyDeviceToHost, st));
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int64_t N = in[0].shape[1];
    const size_t elt = mgk::dtype_size(in[0].dtype);
    const ncclDataType_t t = mgk::nccl_type(in[0].dtype);
    auto* y = static_cast<char*>(out[0].data);
    if (!comm()) {  // the local part alone: this rank's own rows
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(y + first[rank()] * N * elt, in[0].data, mgk::nbytes(in[0]),
                                        cudaMemcpyDeviceToDevice, st));
      return 0;
    }
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    for (int p = 0; p < world(); ++p) {
      MGK_NCCL_TRY(ctx, ncclSend(in[0].data, size_t(in[0].numel), t, p, comm(), st));
      MGK_NCCL_TRY(ctx, ncclRecv(y + first[p] * N * elt, size_t(rows[p] * N), t, p, comm(), st));
    }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());
    return 0;
  }

  // Row i of y is row i - first(s) of rank s, where rank s has M + DM s rows (the shape
  // expression of problem.json, which this must follow) and first(s) = s M + DM s (s - 1) / 2.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int64_t M = this->M, DM = this->DM, N = a->outputs[0].shape[1];  // by value into the device lambda
    const int w = world();
    if (a->outputs[0].shape[0] != w * M + DM * w * (w - 1) / 2)
      return mgk::set_error(ctx, "y has %lld rows, not the sum of M + DM r", (long long)a->outputs[0].shape[0]);
    MGK_CUDA_TRY(ctx, mgk::oracle::copy(
                          a->gens[0],
                          [=] __device__(int64_t i) {
                            const int64_t row = i / N;
                            int s = 0;
                            while (s + 1 < w && (s + 1) * M + DM * (s + 1) * s / 2 <= row) ++s;
                            const int64_t first = s * M + DM * s * (s - 1) / 2;
                            return mgk::oracle::Source{s, (row - first) * N + i % N};
                          },
                          a->expected[0], a->outputs[0].numel, st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(AllGatherVariable)
