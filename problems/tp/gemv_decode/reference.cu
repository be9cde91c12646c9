// Reference: cuBLASLt computes x_r weight_r^T (T x VL; bf16 out, fp32 accumulation) straight
// into this rank's slot of the all-gather buffer (W slots, each padded to 256 bytes), a
// kernel adds the bias in bf16 (PyTorch's matmul, then add: two roundings), NCCL all-gathers
// in place, and a strided copy lays the W blocks side by side as the columns of logits.
#include "mgk/lt_gemm.h"
#include "mgk/reference_kit.h"

namespace {

// d[t, v] = bf16(d[t, v] + bias[v]) for the T x VL block at d.
__global__ void add_bias_kernel(__nv_bfloat16* d, const __nv_bfloat16* bias, int64_t t, int64_t vl) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < t * vl; i += int64_t(gridDim.x) * blockDim.x)
    d[i] = __hadd(d[i], bias[i % vl]);
}

struct GemvDecode : mgk::Reference {
  using Reference::Reference;
  const int64_t T = dim("T"), H = dim("H"), VL = dim("VL"), V = dim("V");
  const int64_t slot = (T * VL + 127) / 128 * 128;  // elements per slot of the all-gather buffer
  mgk::lt::Handle lt;
  mgk::lt::Gemm gemm;
  mgk::DeviceBuffer<__nv_bfloat16> gathered;  // W slots of T x VL

  int setup() {
    MGK_CUDA_TRY(ctx, gathered.allocate(world() * slot));
    MGK_CUBLAS_TRY(ctx, lt.create());
    mgk::lt::GemmShape shape{T, VL, H};
    shape.trans_b = true;  // weight is stored VL x H: the product uses its transpose
    MGK_CUBLAS_TRY(ctx, gemm.plan(lt, shape));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    __nv_bfloat16* mine = gathered + rank() * slot;
    MGK_CUBLAS_TRY(ctx, gemm.run(in[0].data, in[1].data, mine, st));
    const int64_t n = T * VL;
    add_bias_kernel<<<unsigned(std::min<int64_t>((n + 255) / 256, 1024)), 256, 0, st>>>(
        mine, static_cast<const __nv_bfloat16*>(in[2].data), T, VL);
    MGK_LAUNCH_CHECK(ctx);
    MGK_NCCL_STEP(ctx, ncclAllGather(mine, gathered, slot, ncclBfloat16, comm(), st));
    MGK_CUDA_TRY(ctx, mgk::blocks_side_by_side(gathered, slot * 2, out[0].data, T, VL, 2, world(), st));
    return 0;
  }

  // Column block s of logits = x_s weight_s^T + bias_s exactly, from rank s's regenerated
  // inputs. Two bf16 roundings: of the product p (|p|) and of its sum with the bias (|logits|);
  // plus the fp32 accumulation of H terms times |x_s| |weight_s|^T.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    namespace o = mgk::oracle;
    const int64_t V = this->V;  // by value into the device lambda
    o::Scratch scratch(st);
    double *X = scratch.get<double>(T * H), *Wt = scratch.get<double>(VL * H), *mag = scratch.get<double>(T * V),
           *bias = scratch.get<double>(V);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    cublasHandle_t h = oracle_blas(st);
    if (!h) return 1;
    auto* expected = static_cast<double*>(a->expected[0]);
    for (int r = 0; r < world(); ++r) {
      MGK_CUDA_TRY(ctx, o::regen(a->gens[0], r, H, 0, 0, T, H, X, H, st));
      MGK_CUDA_TRY(ctx, o::regen(a->gens[1], r, H, 0, 0, VL, H, Wt, H, st));
      MGK_CUDA_TRY(ctx, o::regen(a->gens[2], r, VL, 0, 0, 1, VL, bias + r * VL, VL, st));
      MGK_CUBLAS_TRY(ctx, o::product_and_magnitude(h, T, VL, H, {X, H, T * H}, {Wt, H, VL * H, true},
                                                   expected + r * VL, 0, mag + r * VL, 0, V, st));
    }
    const double acc = o::fp32_accumulation(H);
    float* scale = a->scale[0];
    MGK_CUDA_TRY(ctx, o::for_each(
                          T * V,
                          [=] __device__(int64_t i) {
                            const double p = expected[i], y = p + bias[i % V];
                            expected[i] = y;
                            scale[i] = float(fabs(p) + fabs(y) + acc * mag[i]);
                          },
                          st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(GemvDecode)
