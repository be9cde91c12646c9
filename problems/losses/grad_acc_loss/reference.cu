// Reference, as ParallelKernelBench's PyTorch code computes it (every bf16 rounding of its
// 0-dim tensor ops, int64 counts cast to bf16), without its host synchronisation: a
// one-thread kernel writes t_r into loss_sum and the gradient, NCCL all-reduces loss_sum in
// bf16 in place, and a one-thread kernel divides it by the global count.
#include "mgk/reference_kit.h"

namespace {

__device__ inline float bf(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }

// PyTorch's nan_to_num for bf16: NaN to 0, infinities to the largest finite values.
__device__ inline float nan_to_num(float v) {
  if (v != v) return 0;
  if (isinf(v)) return v > 0 ? 3.3895313892515355e38f : -3.3895313892515355e38f;
  return v;
}

__global__ void local_kernel(const __nv_bfloat16* loss, const int64_t* local, const int64_t* global,
                             const __nv_bfloat16* grad_norm, const __nv_bfloat16* grad_sum, __nv_bfloat16* loss_sum,
                             __nv_bfloat16* grad) {
  const float n = bf(float(*local)), g = bf(float(*global));
  const float l = *local == 0 ? nan_to_num(__bfloat162float(*loss)) : __bfloat162float(*loss);
  *loss_sum = __float2bfloat16_rn(l * n);
  const float from_normalized = bf(bf(__bfloat162float(*grad_norm) * n) / g);
  const float from_sum = bf(__bfloat162float(*grad_sum) * n);
  *grad = __float2bfloat16_rn(from_normalized + from_sum);
}

__global__ void normalize_kernel(const __nv_bfloat16* loss_sum, const int64_t* global, __nv_bfloat16* normalized) {
  *normalized = __float2bfloat16_rn(__bfloat162float(*loss_sum) / bf(float(*global)));
}

struct Gens {
  mgk_input_gen loss, local, global, grad_norm, grad_sum;
};

__global__ void exact_kernel(Gens g, int world, int rank, double* normalized, float* normalized_scale, double* loss_sum,
                             float* loss_sum_scale, double* grad, float* grad_scale) {
  double sum = 0, mag = 0;
  for (int s = 0; s < world; ++s) {
    const double n = mgk::gen_value(g.local, s, 0), t = n == 0 ? 0 : mgk::gen_value(g.loss, s, 0) * n;
    sum += t, mag += fabs(t);
  }
  const double n = mgk::gen_value(g.local, rank, 0), G = mgk::gen_value(g.global, rank, 0);
  *loss_sum = sum, *loss_sum_scale = float(mag);
  *normalized = sum / G, *normalized_scale = float((mag + fabs(sum)) / G);
  const double a = mgk::gen_value(g.grad_norm, rank, 0) * n / G, b = mgk::gen_value(g.grad_sum, rank, 0) * n;
  *grad = a + b, *grad_scale = float(fabs(a) + fabs(b) + fabs(a + b));
}

struct GradAccLoss : mgk::Reference {
  using Reference::Reference;

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const auto* global = static_cast<const int64_t*>(in[2].data);
    auto* loss_sum = static_cast<__nv_bfloat16*>(out[1].data);
    local_kernel<<<1, 1, 0, st>>>(static_cast<const __nv_bfloat16*>(in[0].data), static_cast<const int64_t*>(in[1].data),
                                  global, static_cast<const __nv_bfloat16*>(in[3].data),
                                  static_cast<const __nv_bfloat16*>(in[4].data), loss_sum,
                                  static_cast<__nv_bfloat16*>(out[2].data));
    MGK_LAUNCH_CHECK(ctx);
    MGK_NCCL_STEP(ctx, ncclAllReduce(loss_sum, loss_sum, 1, ncclBfloat16, ncclSum, comm(), st));
    normalize_kernel<<<1, 1, 0, st>>>(loss_sum, global, static_cast<__nv_bfloat16*>(out[0].data));
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  // Exact values from every rank's regenerated scalars. S: for loss_sum the sum of |t_s|
  // (every rounding, the casts', the product's and the W - 1 additions', is of a value no
  // larger: factor W + 2); for normalized_loss that over the global count plus |loss_sum| /
  // global (the cast of the count and the division); for grad_loss |a| + |b| + |a + b| (a
  // rounded four times, b twice, the sum once: factor 5). See statement.md.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const Gens g{a->gens[0], a->gens[1], a->gens[2], a->gens[3], a->gens[4]};
    exact_kernel<<<1, 1, 0, st>>>(g, world(), rank(), static_cast<double*>(a->expected[0]), a->scale[0],
                                  static_cast<double*>(a->expected[1]), a->scale[1],
                                  static_cast<double*>(a->expected[2]), a->scale[2]);
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(GradAccLoss)
