// Reference: torch's all_to_all_single with equal splits, as NCCL point-to-point in one
// group: rank R sends its row block p to rank p and receives rank p's row block R into its
// row block p.
#include "mgk/reference_kit.h"

namespace {

struct All2AllPrimitive : mgk::Reference {
  using Reference::Reference;
  const int64_t C = dim("C"), N = dim("N");

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int W = world();
    const size_t block = size_t(C * N);
    const size_t bytes = block * mgk::dtype_size(in[0].dtype);
    const ncclDataType_t t = mgk::nccl_type(in[0].dtype);
    ncclComm_t comm = this->comm();
    if (!comm) {  // bench/compute: the local part alone, the own block kept in place
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(static_cast<char*>(out[0].data) + rank() * bytes,
                                        static_cast<const char*>(in[0].data) + rank() * bytes, bytes,
                                        cudaMemcpyDeviceToDevice, st));
      return 0;
    }
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    for (int p = 0; p < W; ++p) {
      MGK_NCCL_TRY(ctx, ncclSend(static_cast<const char*>(in[0].data) + p * bytes, block, t, p, comm, st));
      MGK_NCCL_TRY(ctx, ncclRecv(static_cast<char*>(out[0].data) + p * bytes, block, t, p, comm, st));
    }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());
    return 0;
  }

  // Output element i of rank R sits in row block s = i / (C N): it is element (i mod C N) of
  // rank s's row block R, regenerated.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int64_t block = C * N, r = rank();  // by value into the device lambda
    MGK_CUDA_TRY(ctx, mgk::oracle::copy(
                          a->gens[0],
                          [=] __device__(int64_t i) {
                            return mgk::oracle::Source{int(i / block), r * block + i % block};
                          },
                          a->expected[0], a->outputs[0].numel, st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(All2AllPrimitive)
