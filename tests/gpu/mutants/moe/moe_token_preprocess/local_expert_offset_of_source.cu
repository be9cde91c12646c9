// Mutant of tests/gpu/candidates/moe/moe_token_preprocess.cu. Class: off by one in a rank offset (the source's experts).
// Peer p's counts for p's own local experts (p L + l) are read instead of for this rank's (r L + l).
//
// The plain candidate's description:
// Plain: every rank counts its picks per expert (integer atomics) into its symmetric slot;
// after a barrier one thread block reads every rank's counts from the peers and writes the
// four outputs. The first barrier of the next call keeps a rank from recounting while a peer
// still reads. MGK_LOCAL_ONLY: the peers' counts are taken as zeros.
#include "../../../candidates/plain_compute.cuh"

namespace {
__global__ void count_kernel(const int64_t* ids, int64_t n, unsigned* counts) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    atomicAdd(counts + ids[i], 1u);
}

__global__ void finish_kernel(void* const* peers, int first, int end, int world, int rank, int L, int64_t* input_splits,
                              int64_t* output_splits, float* per_local, float* sum_local) {
  const int E = world * L;
  const unsigned* mine = static_cast<const unsigned*>(peers[rank]);
  for (int p = threadIdx.x; p < world; p += blockDim.x) {
    const bool used = p >= first && p < end;
    const unsigned* theirs = static_cast<const unsigned*>(peers[p]);
    int64_t in = 0, out = 0;
    for (int l = 0; l < L; ++l) {
      in += mine[p * L + l];
      const unsigned c = used ? theirs[p * L + l] : 0u;
      per_local[p * L + l] = float(c);
      out += c;
    }
    input_splits[p] = in;
    output_splits[p] = out;
  }
  for (int l = threadIdx.x; l < L; l += blockDim.x) {
    int64_t acc = 0;
    for (int s = first; s < end; ++s) acc += static_cast<const unsigned*>(peers[s])[rank * L + l];
    sum_local[l] = float(acc);
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {size_t(mgk::dim(ctx, "E")) * 4}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  plain::State& st = plain::state(ctx);
  const int E = int(mgk::dim(ctx, "E")), L = int(mgk::dim(ctx, "L"));
  auto* counts = static_cast<unsigned*>(st.sym[0].local);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's counts of the last call
  MGK_CUDA_TRY(ctx, cudaMemsetAsync(counts, 0, size_t(E) * 4, s));
  count_kernel<<<plain::blocks_for(in[0].numel), 256, 0, s>>>(static_cast<const int64_t*>(in[0].data), in[0].numel,
                                                               counts);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's counts are complete
  finish_kernel<<<1, 256, 0, s>>>(st.sym[0].peers, plain::first_source(ctx), plain::end_source(ctx), ctx->world_size,
                                  ctx->rank, L, static_cast<int64_t*>(out[0].data), static_cast<int64_t*>(out[1].data),
                                  static_cast<float*>(out[2].data), static_cast<float*>(out[3].data));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
