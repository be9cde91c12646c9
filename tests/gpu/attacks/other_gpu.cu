// ATTACK: queue work on another GPU that outlives the call.
// Flaw aimed at: a candidate process that sees every GPU of the host (in a bench with
// several GPU groups, other attempts' GPUs) and a stub that waits for its own device only.
// mgk_setup says on stderr how many devices it sees. When it sees more than one, every one
// of its first kMaxSpins mgk_run calls launches on device 1 (device 0 if its own is 1) a
// one-thread kernel that spins ~200 ms (bounded, %globaltimer), does not wait for it, and
// switches back to its own device before the correct all-reduce.
// Expected verdict on a one-GPU machine (or a process shown its GPU alone): correct, its
// stderr saying "devices visible: 1". With more devices visible: correct, and the stub's
// wait for every device it can see is what keeps the spin inside the call.
#include "../candidates/simple_common.cuh"

namespace {
constexpr int kMaxSpins = 8;  // ~1.6 s in all: a test that sees several GPUs stays short
constexpr unsigned long long kSpinNs = 200ull * 1000 * 1000;
int g_devices = 0, g_spins = 0;

__global__ void spin(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  while (now - start < ns);
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  MGK_CUDA_TRY(ctx, cudaGetDeviceCount(&g_devices));
  std::fprintf(stderr, "attack: devices visible: %d (own device %d)\n", g_devices, ctx->device);
  return simple::setup(ctx);
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { simple::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  if (g_devices > 1 && g_spins < kMaxSpins) {
    const int other = ctx->device == 1 ? 0 : 1;
    MGK_CUDA_TRY(ctx, cudaSetDevice(other));
    spin<<<1, 1>>>(kSpinNs);  // that device's default stream; never waited for
    const cudaError_t e = cudaGetLastError();
    MGK_CUDA_TRY(ctx, cudaSetDevice(ctx->device));
    MGK_CUDA_TRY(ctx, e);
    if (g_spins++ == 0) std::fprintf(stderr, "attack: a 200 ms spin queued on device %d\n", other);
  }
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  return 0;
}
