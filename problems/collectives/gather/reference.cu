// Reference: gather to rank 0 with NCCL point-to-point: y_0[s*C + i] = x_s[i].
#include "mgk/reference_kit.h"

namespace {

struct Gather : mgk::Reference {
  using Reference::Reference;

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t s) {
    int64_t c = in[0].numel;
    size_t bytes = c * mgk::dtype_size(in[0].dtype);
    ncclDataType_t t = mgk::nccl_type(in[0].dtype);
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    if (rank() == 0) {
      for (int r = 1; r < world(); ++r)
        MGK_NCCL_TRY(ctx, ncclRecv(static_cast<char*>(out[0].data) + r * bytes, c, t, r, comm(), s));
    } else {
      MGK_NCCL_TRY(ctx, ncclSend(in[0].data, c, t, 0, comm(), s));
    }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());
    if (rank() == 0) MGK_CUDA_TRY(ctx, cudaMemcpyAsync(out[0].data, in[0].data, bytes, cudaMemcpyDeviceToDevice, s));
    return 0;
  }

  int oracle(const mgk_oracle_args* a, cudaStream_t s) {
    int64_t c = a->inputs[0].numel;
    MGK_CUDA_TRY(ctx, mgk::oracle::copy(a->gens[0], [=] __device__(int64_t i) { return mgk::oracle::Source{int(i / c), i % c}; },
                                        a->expected[0], a->outputs[0].numel, s));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(Gather)
