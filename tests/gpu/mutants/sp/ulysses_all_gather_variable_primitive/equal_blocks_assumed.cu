// Mutant of tests/gpu/candidates/sp/ulysses_all_gather_variable_primitive.cu. Class: off by one in an index (an even split assumed).
// Rank r's rows are placed at r * (this rank's row count), the offset of an even split, instead of the prefix sum of the counts (clamped to y).
//
// The plain candidate's description:
// Plain: the ranks' row counts are exchanged once at setup (each rank publishes its own in a
// symmetric buffer, a host barrier, a kernel reads every peer's); every call then, after a
// barrier, copies each rank's x (peer pointers) into its rows of y. Under MGK_LOCAL_ONLY
// only its own rows (the others zeros).
#include "../../../candidates/plain_compute.cuh"

#include <map>

namespace {
// Per context (a process may hold more than one): each rank's first row of y, then the total.
std::map<const mgk_ctx*, std::vector<int64_t>> g_first;

__global__ void read_counts(void* const* peers, int world, int64_t* out) {
  for (int p = threadIdx.x; p < world; p += blockDim.x) out[p] = *static_cast<const int64_t*>(peers[p]);
}

int exchange_counts(mgk_ctx* ctx) {
  const int w = ctx->world_size;
  const mgk_sym_buffer& mine = plain::state(ctx).sym[0];
  const int64_t rows = ctx->inputs[0].shape[0];
  MGK_CUDA_TRY(ctx, cudaMemcpy(mine.local, &rows, sizeof rows, cudaMemcpyHostToDevice));
  MGK_CUDA_TRY(ctx, cudaDeviceSynchronize());
  if (ctx->host_barrier(ctx)) return mgk::set_error(ctx, "host barrier failed");
  int64_t* d = static_cast<int64_t*>(plain::state(ctx).local[0]);
  read_counts<<<1, 128>>>(mine.peers, w, d);
  MGK_LAUNCH_CHECK(ctx);
  std::vector<int64_t> counts(w);
  MGK_CUDA_TRY(ctx, cudaMemcpy(counts.data(), d, sizeof(int64_t) * w, cudaMemcpyDeviceToHost));
  if (ctx->host_barrier(ctx)) return mgk::set_error(ctx, "host barrier failed");  // all read before any reuse
  std::vector<int64_t>& first = g_first[ctx];
  first.assign(w + 1, 0);
  for (int p = 0; p < w; ++p) first[p + 1] = first[p] + counts[p];
  return 0;
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  if (plain::setup(ctx, {sizeof(int64_t)}, {sizeof(int64_t) * ctx->world_size})) return 1;
  return exchange_counts(ctx);
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  g_first.erase(ctx);
  plain::teardown(ctx);
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t N = in[0].shape[1];
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's x of this call is in place
  auto* y = static_cast<__nv_bfloat16*>(out[0].data);
  const std::vector<int64_t>& first = g_first.at(ctx);
  for (int r = 0; r < ctx->world_size; ++r)
    {
      const int64_t mine = first[ctx->rank + 1] - first[ctx->rank], at = r * mine;
      const int64_t rows = std::max<int64_t>(0, std::min(first[r + 1] - first[r], first[ctx->world_size] - at));
      MGK_CUDA_TRY(ctx, plain::copy_from(ctx, r, in[0].host_peers[r], N, y + at * N, N, rows, N, s));
    }
  return 0;
}
