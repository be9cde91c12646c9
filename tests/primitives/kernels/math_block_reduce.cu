// Primitive under test: math/block_reduce.cuh (with vec_math.cuh): a sum over every rank's
// x, pulled, into my y, in fp32 with one rounding, bf16 and f32: 16-byte vectors where the
// parts are aligned, element by element for the tail. An all-reduce by pull.
#include "primitive_test.cuh"

enum region { kStart, kEnd, kRegions };

template <class T>
struct operands {
  prim::sym_view<T> x;
  T* y;
  int64_t n;
  prim::block_flags flags;
  uint64_t epoch;
};

template <class T>
__global__ void __launch_bounds__(primitive_test::kThreads) sum_all(operands<T> o) {
  const prim::span part = prim::split_aligned(o.n, gridDim.x, blockIdx.x, 16 / sizeof(T));
  prim::block_handshake(o.flags.slots(kStart, blockIdx.x), o.epoch, "block_reduce test: start");
  __shared__ const T* srcs[MGK_MAX_WORLD];
  for (int r = threadIdx.x; r < o.x.world; r += blockDim.x) srcs[r] = o.x.peer(r) + part.begin;
  __syncthreads();
  prim::block_reduce<T, 2>(o.y + part.begin, srcs, o.x.world, part.size());
  prim::block_handshake(o.flags.slots(kEnd, blockIdx.x), o.epoch, "block_reduce test: end");
}

template <class T>
int launch(mgk_ctx* ctx, const mgk_tensor& x, const mgk_tensor& y, cudaStream_t stream) {
  auto* st = primitive_test::of(ctx);
  operands<T> o{};
  if (prim::view_of(ctx, x, &o.x) != 0) return 1;
  o.y = static_cast<T*>(y.data);
  o.n = x.numel;
  o.flags = st->flags;
  o.epoch = st->epoch.next();
  sum_all<T><<<st->blocks, primitive_test::kThreads, 0, stream>>>(o);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  return primitive_test::setup(ctx, kRegions, sum_all<__nv_bfloat16>, sum_all<float>);
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  const mgk_tensor *x, *y;
  if (primitive_test::find_x_y(ctx, in, n_in, out, n_out, &x, &y) != 0) return 1;
  return prim::by_sum_dtype(ctx, "the block_reduce test", *x, [&]<class T>() { return launch<T>(ctx, *x, *y, stream); });
}
