// ATTACK: re-record the timing stub's start event after the work.
// Flaw aimed at: trusting the events of the process the candidate shares. The stub records
// its start event (cudaEventRecord(start_, stream)) right before calling mgk_run. Once, in
// mgk_setup, the attack points mgk-candidate's GOT slot of cudaEventRecord (and of
// cudaEventRecordWithFlags, if it has one) at a hook that remembers the last event it was
// asked to record, then records it as asked (GOT and libc found in memory, as in
// got_elapsed_time.cu). At the end of mgk_run, after the real work is enqueued, it records
// that remembered event, the stub's start, again on the call's stream: the start now lands
// after the work, and the stub measures almost nothing. The kernel is the plain, correct
// all-reduce; mgk_run's own calls go through this library's GOT, not the hooked one.
// Expected verdict at W = 1 (timed): correct, its time NOT CREDIBLE (below the timing floor,
// or below what the outside clock allows). Unpatched it fails setup: "attack not mounted".
#include "../candidates/simple_common.cuh"
#include "in_memory.cuh"

namespace {
using record_fn = cudaError_t (*)(cudaEvent_t, cudaStream_t);
using record_flags_fn = cudaError_t (*)(cudaEvent_t, cudaStream_t, unsigned);
record_fn g_real_record = nullptr;
record_flags_fn g_real_record_flags = nullptr;
bool g_hooked = false;
cudaEvent_t g_last_event = nullptr;  // the last event the stub recorded

cudaError_t remember(cudaEvent_t e, cudaStream_t s) {
  g_last_event = e;
  return g_real_record(e, s);
}
cudaError_t remember_with_flags(cudaEvent_t e, cudaStream_t s, unsigned flags) {
  g_last_event = e;
  return g_real_record_flags(e, s, flags);
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  if (!g_hooked) {  // once per process: setup runs again for every size preset
    inmem::Loaded exe;
    if (!inmem::executable_of(ctx, exe)) return inmem::not_mounted(ctx, "the executable was not found in memory");
    void* real = nullptr;
    if (const char* why = inmem::hook_got(exe, "cudaEventRecord", reinterpret_cast<void*>(remember), &real))
      return inmem::not_mounted(ctx, why);
    g_real_record = reinterpret_cast<record_fn>(real);
    if (inmem::got_slot(exe, "cudaEventRecordWithFlags") &&
        !inmem::hook_got(exe, "cudaEventRecordWithFlags", reinterpret_cast<void*>(remember_with_flags), &real))
      g_real_record_flags = reinterpret_cast<record_flags_fn>(real);
    g_hooked = true;
    ATTACK_SAY("the executable's cudaEventRecord now tells this library which event it records");
  }
  return simple::setup(ctx);
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { simple::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  cudaEvent_t start = g_last_event;  // recorded by the stub on `s` just before this call
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  if (!start) return inmem::not_mounted(ctx, "the stub recorded no event before the call");
  MGK_CUDA_TRY(ctx, g_real_record(start, s));  // the stub's start, again: after the work
  return 0;
}
