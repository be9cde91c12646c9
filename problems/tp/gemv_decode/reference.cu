// Reference: cuBLASLt computes x_r weight_r^T (T x VL; bf16 out, fp32 accumulation) straight
// into this rank's slot of the all-gather buffer (W slots, each padded to 256 bytes), a
// kernel adds the bias in bf16 (PyTorch's matmul, then add: two roundings), NCCL all-gathers
// in place, and a strided copy lays the W blocks side by side as the columns of logits.
#include "mgk/lt_gemm.h"
#include "mgk/oracle_gemm.cuh"
#include "mgk/reference.h"

namespace {

struct State {
  mgk::lt::Handle lt;
  mgk::lt::Gemm gemm;
  void* gathered = nullptr;  // W x T x VL
  mgk::oracle::Blas blas;
  ~State() { cudaFree(gathered); }
};

State& state(mgk_ctx* ctx) { return *static_cast<State*>(ctx->state); }

// Elements per slot of the all-gather buffer.
int64_t slot_elems(mgk_ctx* ctx) { return (mgk::dim(ctx, "T") * mgk::dim(ctx, "VL") + 127) / 128 * 128; }

// d[t, v] = bf16(d[t, v] + bias[v]) for the T x VL block at d.
__global__ void add_bias_kernel(__nv_bfloat16* d, const __nv_bfloat16* bias, int64_t t, int64_t vl) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < t * vl; i += int64_t(gridDim.x) * blockDim.x)
    d[i] = __hadd(d[i], bias[i % vl]);
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  const int64_t T = mgk::dim(ctx, "T"), H = mgk::dim(ctx, "H"), VL = mgk::dim(ctx, "VL");
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->gathered, size_t(ctx->world_size * slot_elems(ctx)) * 2));
  MGK_CUBLAS_TRY(ctx, s->lt.create());
  mgk::lt::GemmShape shape{T, VL, H};
  shape.trans_b = true;  // weight is stored VL x H: the product uses its transpose
  MGK_CUBLAS_TRY(ctx, s->gemm.plan(s->lt, shape));
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete &state(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  State& s = state(ctx);
  const int64_t T = mgk::dim(ctx, "T"), VL = mgk::dim(ctx, "VL"), slot = slot_elems(ctx);
  const int64_t block = slot * 2;
  char* gathered = static_cast<char*>(s.gathered);
  auto* mine = reinterpret_cast<__nv_bfloat16*>(gathered + ctx->rank * block);
  MGK_CUBLAS_TRY(ctx, s.gemm.run(in[0].data, in[1].data, mine, st));
  const int64_t n = T * VL;
  add_bias_kernel<<<unsigned(std::min<int64_t>((n + 255) / 256, 1024)), 256, 0, st>>>(
      mine, static_cast<const __nv_bfloat16*>(in[2].data), T, VL);
  MGK_LAUNCH_CHECK(ctx);
  MGK_NCCL_STEP(ctx, ncclAllGather(mine, gathered, slot, ncclBfloat16, mgk::comm(ctx), st));
  MGK_CUDA_TRY(ctx, mgk::blocks_side_by_side(gathered, block, out[0].data, T, VL, 2, ctx->world_size, st));
  return 0;
}

// Column block s of logits = x_s weight_s^T + bias_s exactly, from rank s's regenerated
// inputs. Two bf16 roundings: of the product p (|p|) and of its sum with the bias (|logits|);
// plus the fp32 accumulation of H terms times |x_s| |weight_s|^T.
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  namespace o = mgk::oracle;
  const int64_t T = mgk::dim(ctx, "T"), H = mgk::dim(ctx, "H"), VL = mgk::dim(ctx, "VL"), V = mgk::dim(ctx, "V");
  o::Scratch scratch(st);
  double *X = scratch.get<double>(T * H), *Wt = scratch.get<double>(VL * H), *mag = scratch.get<double>(T * V),
         *bias = scratch.get<double>(V);
  if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
  cublasHandle_t h = o::blas_on(ctx, state(ctx).blas, st);
  if (!h) return 1;
  auto* expected = static_cast<double*>(a->expected[0]);
  for (int r = 0; r < ctx->world_size; ++r) {
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
