// Expert all-reduce on the mgk primitives: y = sum over ranks of x (bf16 or fp32, summed
// in fp32), on the reduction template (primitives/collective/reduction.cuh). By size:
//  * one-shot push (bytes <= ONE_SHOT_MAX_KB): each rank pushes its x into a landing slot on
//    every peer and sums x with the landed copies locally; Lamport slots (LAMPORT=1, whole
//    16-byte vectors) need no sync at all, flagged ones one signal per block pair.
//  * two ranks (ONE_SHOT_W2=1): the one-shot moves exactly the bytes a two-shot does and
//    needs no handshake, so it runs at every size, on Lamport slots (10N bytes of slots per
//    rank for bf16).
//  * two-shot, fused (larger): rank r owns 1/W of the vector, pulls it from every rank,
//    sums it and stores the sum into every rank's y, between a start and an end handshake.
//    Moves 2(W-1)/W of the data per rank.
// Block b of every rank pairs with block b of every other rank (grid agreed at setup).
#include "mgk_primitives.cuh"

namespace prim = mgk::prim;

// ---- config: tuning knobs (the tuner rebuilds with -DNAME=value). The defaults not set here
// are those of primitives/collective/knobs.cuh, which makes `config` of them.
// mgk:tune BLOCKS 0 32 66 264
// mgk:tune THREADS 256 512 1024
// mgk:tune UNROLL 1 2 4
// mgk:tune ONE_SHOT_MAX_KB 0 256 1024 2048 4096 8192
#ifndef ONE_SHOT_MAX_KB
#define ONE_SHOT_MAX_KB 2048
#endif
// mgk:tune ONE_SHOT_W2 0 1  // two ranks: one-shot at every size (see the top comment)
// mgk:tune LAMPORT_LAG 1 2 4 8  // the sums trail the sends by this many steps
// mgk:tune LAMPORT 0 1
#include "collective/knobs.cuh"

using collective = prim::reduction<prim::two_shot_layout::all_reduce, config>;
MGK_COLLECTIVE_ENTRY_POINTS(collective)
