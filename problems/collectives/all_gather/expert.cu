// Expert all-gather on the mgk primitives: y[s*N + i] = x_s[i]. Pure data movement on bytes
// (any dtype), on the exchange template (primitives/collective/exchange.cuh). By the size of
// one rank's piece:
//  * Lamport one-shot (a multiple of 16 bytes, <= LAMPORT_MAX_KB): each rank pushes x into a
//    landing slot on every peer, which sees each vector land; no signal at all.
//  * flagged one-shot (<= ONE_SHOT_MAX_KB): the same push and one signal per block pair; the
//    extra local copy is cheap while the data is in L2.
//  * copy engine (>= CE_MIN_MB): the direct push as cudaMemcpyAsync over CE_STREAMS streams.
//  * direct push (otherwise): between two handshakes, x straight into every rank's y, by
//    register stores or TMA bulk copies (MECH).
// Block b of every rank pairs with block b of every other rank (grid agreed at setup).
#include "mgk_primitives.cuh"

namespace prim = mgk::prim;

// ---- config: tuning knobs (the tuner rebuilds with -DNAME=value). The defaults not set here
// are those of primitives/collective/knobs.cuh, which makes `config` of them.
// mgk:tune BLOCKS 0 16 32 66 264
// mgk:tune THREADS 256 512 1024
// mgk:tune UNROLL 2 4 8
// mgk:tune ONE_SHOT_MAX_KB 0 256 1024 2048 4096
// mgk:tune LAMPORT_MAX_KB 0 256 1024 2048 4096
// mgk:tune LAMPORT_LAG 1 2 4 8
#ifndef LAMPORT_LAG
#define LAMPORT_LAG 4  // the local copies trail the sends by this many steps
#endif
// mgk:tune MECH 0 1  // direct push by 0: register stores, 1: TMA bulk copies
// mgk:tune CE_MIN_MB 16 64 256 1048576  // 1048576: never use the copy engine
// mgk:tune CE_STREAMS 1 2 4
#include "collective/knobs.cuh"

using collective = prim::exchange<prim::exchange_layout::all_gather, config>;
MGK_COLLECTIVE_ENTRY_POINTS(collective)
