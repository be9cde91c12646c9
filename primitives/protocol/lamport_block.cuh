// One block's share of a one-shot on Lamport slots (lamport_slots.cuh): a reduction or an
// exchange. The caller (algorithm/one_shot.cuh) says which part of x goes to which rank and
// where each rank's slot for me is, then calls one of these. No signal and no wait besides the
// per-vector arrival checks.
//
// The block sends in steps of Unroll vectors per thread and consumes LagSteps steps behind
// its sends, so the local work (reading what landed, writing the output, emptying the
// slot) overlaps the link instead of following it; the peers' blocks run the same loop,
// so their data for a step has usually landed LagSteps steps later.
//
// Pointer arrays are indexed by rank and are the caller's (best __shared__, filled before
// a __syncthreads, like block_reduce). A null send[p] means "nothing for rank p", a null
// recv[s] (or out) "nothing to receive (from s)": rooted collectives send one way only.
// All threads of the block call with the same arguments; `flag` = call_flag(epoch), the
// same on every rank.
#pragma once
#include "../math/vec_math.cuh"
#include "lamport_slots.cuh"

namespace mgk::prim {

namespace detail {
// Shared driver: sends step after step of `vecs` (send[p] + 16v to rank p's slot
// to_peer[p], p != me, send[p] not null), and, when `consumes`, calls consume(first, step)
// LagSteps steps behind.
template <int Unroll, int LagSteps, class Consume>
MGK_DEV void lamport_one_shot(span vecs, const char* const* send, const lamport_slot* to_peer, uint32_t flag,
                              int me, int world, bool consumes, Consume&& consume) {
  const int64_t step = blockDim.x, per_step = Unroll * step, lag = LagSteps * per_step;
  for (int64_t base = vecs.begin; base < vecs.end + lag; base += per_step) {
    const int64_t s0 = base + threadIdx.x;
    if (base < vecs.end)
      for (int k = 1; k < world; ++k) {
        const int p = (me + k) % world;
        if (send[p] == nullptr) continue;
        uint4 v[Unroll];
#pragma unroll
        for (int u = 0; u < Unroll; ++u)
          if (s0 + u * step < vecs.end) v[u] = ld16(send[p] + (s0 + u * step) * 16);
#pragma unroll
        for (int u = 0; u < Unroll; ++u)
          if (s0 + u * step < vecs.end) lamport_send(to_peer[p], s0 + u * step, v[u], flag);
      }
    if (consumes && base - lag >= vecs.begin) consume(base - lag + threadIdx.x, step);
  }
}
}  // namespace detail

// Lamport one-shot reduction, T = bf16 or float. For every 16-byte vector index v in `vecs`:
//   rank p != me receives send[p] + 16v;
//   out + 16v = send[me] + 16v + sum over s != me of what rank s sent me (from_peer[s])
// (fp32 accumulation, one rounding). send, out: local; to_peer[p]: rank p's slot for me;
// from_peer[s]: my slot for rank s, left empty (entries `me` unused). out == nullptr: this
// rank only sends (a reduce's non-root); a rank with an `out` receives from every other.
template <class T, int Unroll, int LagSteps = 4>
MGK_DEV void block_lamport_reduce(span vecs, const char* const* send, const lamport_slot* to_peer,
                                  const lamport_slot* from_peer, char* out, uint32_t flag, int me, int world,
                                  const char* what) {
  using M = vec_math<T>;
  detail::lamport_one_shot<Unroll, LagSteps>(vecs, send, to_peer, flag, me, world, out != nullptr,
                                             [&](int64_t r0, int64_t step) {
    float acc[Unroll][M::lanes] = {};
#pragma unroll
    for (int u = 0; u < Unroll; ++u)
      if (r0 + u * step < vecs.end) M::add(acc[u], ld16(send[me] + (r0 + u * step) * 16));
    for (int k = 1; k < world; ++k) {
      const int s = (me + k) % world;
      uint4 seen[Unroll];
#pragma unroll
      for (int u = 0; u < Unroll; ++u)
        if (r0 + u * step < vecs.end) seen[u] = ld16_volatile(from_peer[s].data + (r0 + u * step) * 16);
#pragma unroll
      for (int u = 0; u < Unroll; ++u)
        if (r0 + u * step < vecs.end)
          M::add(acc[u], lamport_take(from_peer[s], r0 + u * step, seen[u], flag, stall_site{what, me, s}));
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u)
      if (r0 + u * step < vecs.end) st16(out + (r0 + u * step) * 16, M::pack(acc[u]));
  });
}

// Lamport one-shot exchange of bytes (all-gather, all-to-all). For every vector index v:
//   rank p != me receives send[p] + 16v;  recv[s] + 16v = what rank s sent me;
//   recv[me] + 16v = send[me] + 16v (a local copy).
// Same pointer rules as block_lamport_reduce; recv entries are local.
template <int Unroll, int LagSteps = 4>
MGK_DEV void block_lamport_exchange(span vecs, const char* const* send, const lamport_slot* to_peer,
                                    const lamport_slot* from_peer, char* const* recv, uint32_t flag, int me,
                                    int world, const char* what) {
  bool consumes = false;
  for (int s = 0; s < world; ++s) consumes = consumes || recv[s] != nullptr;
  detail::lamport_one_shot<Unroll, LagSteps>(vecs, send, to_peer, flag, me, world, consumes,
                                             [&](int64_t r0, int64_t step) {
    for (int k = 0; k < world; ++k) {
      const int s = (me + k) % world;
      if (recv[s] == nullptr) continue;
      uint4 seen[Unroll];
#pragma unroll
      for (int u = 0; u < Unroll; ++u)
        if (r0 + u * step < vecs.end)
          seen[u] = k == 0 ? ld16(send[me] + (r0 + u * step) * 16) : ld16_volatile(from_peer[s].data + (r0 + u * step) * 16);
#pragma unroll
      for (int u = 0; u < Unroll; ++u)
        if (r0 + u * step < vecs.end)
          st16(recv[s] + (r0 + u * step) * 16,
               k == 0 ? seen[u] : lamport_take(from_peer[s], r0 + u * step, seen[u], flag, stall_site{what, me, s}));
    }
  });
}

}  // namespace mgk::prim
