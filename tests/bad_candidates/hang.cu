// Flaw: waits forever (no bound) on a flag that no rank ever sets.
#include "../gpu/candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

__global__ void wait_forever(volatile unsigned long long* flag) {
  while (*flag != 0xdeadbeefull) {
  }
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor*, int, const mgk_tensor*, int, cudaStream_t s) {
  auto* st = static_cast<simple::State*>(ctx->state);
  wait_forever<<<1, 1, 0, s>>>(static_cast<unsigned long long*>(st->flags.local));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
