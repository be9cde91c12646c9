// Reference: scatter from rank 0 with NCCL point-to-point (NCCL has no scatter):
// y_r = x_0[r*C : (r+1)*C].
#include "mgk/reference_kit.h"

namespace {

struct Scatter : mgk::Reference {
  using Reference::Reference;

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t s) {
    int64_t c = out[0].numel;
    size_t bytes = c * mgk::dtype_size(out[0].dtype);
    ncclDataType_t t = mgk::nccl_type(out[0].dtype);
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    if (rank() == 0) {
      for (int r = 1; r < world(); ++r)
        MGK_NCCL_TRY(ctx, ncclSend(static_cast<char*>(in[0].data) + r * bytes, c, t, r, comm(), s));
    } else {
      MGK_NCCL_TRY(ctx, ncclRecv(out[0].data, c, t, 0, comm(), s));
    }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());
    if (rank() == 0) MGK_CUDA_TRY(ctx, cudaMemcpyAsync(out[0].data, in[0].data, bytes, cudaMemcpyDeviceToDevice, s));
    return 0;
  }

  int oracle(const mgk_oracle_args* a, cudaStream_t s) {
    int64_t c = a->outputs[0].numel, base = int64_t(rank()) * c;
    MGK_CUDA_TRY(ctx, mgk::oracle::copy(a->gens[0], [=] __device__(int64_t i) { return mgk::oracle::Source{0, base + i}; },
                                        a->expected[0], c, s));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(Scatter)
