// The one-shot algorithm, for a kernel to call from every block of its grid (all with the
// same arguments; each block takes its share). Every rank sends every peer its part of x
// once, straight into that peer's landing slot for me (protocol/lamport_slots.cuh), and
// each rank then finishes locally from what landed: a sum, or copies into y. One call, two
// independent choices: the layout (one_shot_args: which collective) and the protocol
// (a policy type, protocol/policy.cuh):
//   lamport: no signal at all; bytes a multiple of 16; slots from landing_memory::for_lamport;
//   flagged: push, one signal per block pair, wait; any size; slots from
//            landing_memory::for_flagged and a flag region of its own (`landed`).
// Rooted forms (broadcast, scatter, gather, reduce) are Lamport only and pace themselves
// with credits (protocol/credits.cuh).
#pragma once
#include "../mechanism/block_copy.cuh"
#include "../math/block_reduce.cuh"
#include "../protocol/protocol.cuh"

namespace mgk::prim {

// One rank's side of a one-shot collective, in bytes:
//   rank p is sent [x + p * x_stride, + bytes)   (x_stride 0: every rank gets all of x);
//   a reduction writes my sum to [y, + bytes);
//   an exchange writes what rank s sent me to [y + s * y_stride, + bytes).
// all-reduce {x, 0, y, -}; reduce-scatter {x, part, y, -}; all-gather {x, 0, y, part};
// all-to-all {x, part, y, part}.
struct one_shot_args {
  const char* x;
  size_t x_stride;
  char* y;
  size_t y_stride;
  size_t bytes;
  lamport_slots landing;
  uint64_t epoch;
};

namespace detail {
// The per-rank pointers of a Lamport one-shot, in shared memory (indexed by rank).
struct lamport_ptrs {
  const char* send[MGK_MAX_WORLD];
  char* recv[MGK_MAX_WORLD];
  lamport_slot to_peer[MGK_MAX_WORLD], from_peer[MGK_MAX_WORLD];
};

MGK_DEV lamport_ptrs& lamport_pointers(const one_shot_args& a, flow f = flow::all, int root = 0) {
  __shared__ lamport_ptrs p;
  const int me = a.landing.mem.rank;
  for (int r = threadIdx.x; r < a.landing.mem.world; r += blockDim.x) {
    p.send[r] = a.x + r * a.x_stride;
    p.recv[r] = a.y + r * a.y_stride;
    if (f == flow::from_root) {
      if (me != root) p.send[r] = nullptr;
      p.recv[r] = r == root ? a.y : nullptr;
    } else if (f == flow::to_root) {
      p.send[r] = r == root ? a.x : nullptr;
      if (me != root) p.recv[r] = nullptr;
    }
    p.to_peer[r] = a.landing.outbox(r, a.epoch);
    p.from_peer[r] = a.landing.inbox(r, a.epoch);
  }
  __syncthreads();
  return p;
}

// The flagged form's first half: my block's part of every peer's piece into its slot for
// me, then one signal per peer (region `landed`, pair blockIdx.x).
template <int Unroll>
MGK_DEV void flagged_push(const one_shot_args& a, span part, const sym_view<uint64_t>& landed) {
  const int me = a.landing.mem.rank, world = a.landing.mem.world;
  for (int k = 1; k < world; ++k) {
    const int p = (me + k) % world;
    block_copy<Unroll>(a.landing.outbox(p, a.epoch).data + part.begin, a.x + p * a.x_stride + part.begin, part.size());
  }
  block_signal(landed, a.epoch);
}
}  // namespace detail

// One-shot reduction (T = bf16 or float, fp32 accumulation): y = my piece of x plus every
// peer's piece for me. `landed`: this block's flag slots (block_flags::slots(region,
// blockIdx.x)), used by the flagged protocol only; `what` names the wait in a stall report.
// Lamport: bytes a multiple of 16; flagged: any multiple of sizeof(T). LagSteps: how many
// steps the Lamport sums trail the sends.
template <class Protocol, class T, int Unroll, int LagSteps = 4>
MGK_DEV void one_shot_reduce(const one_shot_args& a, const sym_view<uint64_t>& landed, const char* what) {
  if constexpr (Protocol::whole_vectors) {
    const detail::lamport_ptrs& p = detail::lamport_pointers(a);
    const span vecs = split_even(int64_t(a.bytes / 16), gridDim.x, blockIdx.x);
    block_lamport_reduce<T, Unroll, LagSteps>(vecs, p.send, p.to_peer, p.from_peer, a.y, call_flag(a.epoch),
                                              a.landing.mem.rank, a.landing.mem.world, what);
  } else {
    const int me = a.landing.mem.rank, world = a.landing.mem.world;
    const span part = split_aligned(int64_t(a.bytes), gridDim.x, blockIdx.x, 16);
    detail::flagged_push<Unroll>(a, part, landed);
    block_wait(landed, a.epoch, what);
    __shared__ const T* srcs[MGK_MAX_WORLD];
    for (int s = threadIdx.x; s < world; s += blockDim.x)
      srcs[s] = reinterpret_cast<const T*>(s == me ? a.x + me * a.x_stride + part.begin
                                                   : a.landing.inbox(s, a.epoch).data + part.begin);
    __syncthreads();
    block_reduce<T, Unroll>(reinterpret_cast<T*>(a.y + part.begin), srcs, world, part.size() / int64_t(sizeof(T)));
  }
}

// One-shot exchange (any dtype): y + s * y_stride = what rank s sent me. Same arguments as
// one_shot_reduce. The flagged form copies my own piece while the peers' data is in flight.
template <class Protocol, int Unroll, int LagSteps = 4>
MGK_DEV void one_shot_exchange(const one_shot_args& a, const sym_view<uint64_t>& landed, const char* what) {
  if constexpr (Protocol::whole_vectors) {
    const detail::lamport_ptrs& p = detail::lamport_pointers(a);
    const span vecs = split_even(int64_t(a.bytes / 16), gridDim.x, blockIdx.x);
    block_lamport_exchange<Unroll, LagSteps>(vecs, p.send, p.to_peer, p.from_peer, p.recv, call_flag(a.epoch),
                                             a.landing.mem.rank, a.landing.mem.world, what);
  } else {
    const int me = a.landing.mem.rank, world = a.landing.mem.world;
    const span part = split_aligned(int64_t(a.bytes), gridDim.x, blockIdx.x, 16);
    detail::flagged_push<Unroll>(a, part, landed);
    block_copy<Unroll>(a.y + me * a.y_stride + part.begin, a.x + me * a.x_stride + part.begin, part.size());
    block_wait(landed, a.epoch, what);
    for (int s = 0; s < world; ++s)
      if (s != me)
        block_copy<Unroll>(a.y + s * a.y_stride + part.begin, a.landing.inbox(s, a.epoch).data + part.begin, part.size());
  }
}

// Rooted one-shots, Lamport only. `credits`: this block's slots of a flag region of their
// own (block_flags::slots(region, blockIdx.x)); see protocol/credits.cuh.

// flow::from_root (broadcast: x_stride 0; scatter: x_stride = bytes): every rank's y gets
// [root's x + me * x_stride, + bytes). flow::to_root (gather): the root's y + s * y_stride
// gets rank s's x. The stride the flow does not name is not used.
template <class Protocol, int Unroll, int LagSteps>
MGK_DEV void rooted_exchange(const one_shot_args& a, flow f, int root, const sym_view<uint64_t>& credits,
                             const char* what) {
  static_assert(Protocol::whole_vectors, "the rooted one-shots exist on Lamport slots only");
  lamport_credits(credits, a.epoch, f, root, what);
  const detail::lamport_ptrs& p = detail::lamport_pointers(a, f, root);
  const span vecs = split_even(int64_t(a.bytes / 16), gridDim.x, blockIdx.x);
  block_lamport_exchange<Unroll, LagSteps>(vecs, p.send, p.to_peer, p.from_peer, p.recv, call_flag(a.epoch),
                                           a.landing.mem.rank, a.landing.mem.world, what);
}

// Reduction to the root (reduce, T = bf16 or float): the root's y = sum over ranks of x.
// x_stride and y_stride are not used; the other ranks' y is not touched.
template <class Protocol, class T, int Unroll, int LagSteps>
MGK_DEV void reduce_to_root(const one_shot_args& a, int root, const sym_view<uint64_t>& credits, const char* what) {
  static_assert(Protocol::whole_vectors, "the rooted one-shots exist on Lamport slots only");
  lamport_credits(credits, a.epoch, flow::to_root, root, what);
  const detail::lamport_ptrs& p = detail::lamport_pointers(a, flow::to_root, root);
  const span vecs = split_even(int64_t(a.bytes / 16), gridDim.x, blockIdx.x);
  const int me = a.landing.mem.rank;
  block_lamport_reduce<T, Unroll, LagSteps>(vecs, p.send, p.to_peer, p.from_peer, me == root ? a.y : nullptr,
                                            call_flag(a.epoch), me, a.landing.mem.world, what);
}

}  // namespace mgk::prim
