// Reference: all-to-all with NCCL point-to-point: y_r[s*C + i] = x_s[r*C + i].
#include "mgk/reference_kit.h"

namespace {

struct AllToAll : mgk::Reference {
  using Reference::Reference;

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t s) {
    int w = world();
    int64_t c = in[0].numel / w;
    size_t bytes = c * mgk::dtype_size(in[0].dtype);
    ncclDataType_t t = mgk::nccl_type(in[0].dtype);
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    for (int p = 0; p < w; ++p) {
      MGK_NCCL_TRY(ctx, ncclSend(static_cast<const char*>(in[0].data) + p * bytes, c, t, p, comm(), s));
      MGK_NCCL_TRY(ctx, ncclRecv(static_cast<char*>(out[0].data) + p * bytes, c, t, p, comm(), s));
    }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());
    return 0;
  }

  int oracle(const mgk_oracle_args* a, cudaStream_t s) {
    int64_t c = a->outputs[0].numel / world(), r = rank();
    MGK_CUDA_TRY(ctx, mgk::oracle::copy(a->gens[0], [=] __device__(int64_t i) { return mgk::oracle::Source{int(i / c), r * c + i % c}; },
                                        a->expected[0], a->outputs[0].numel, s));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(AllToAll)
