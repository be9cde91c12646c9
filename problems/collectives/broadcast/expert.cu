// Expert broadcast on the mgk primitives: y = x_0 on every rank (root 0). Pure data movement
// on bytes (any dtype), on the rooted template (primitives/collective/rooted.cuh). By size:
//  * Lamport one-shot (a multiple of 16 bytes, <= LAMPORT_MAX_KB): the root pushes x into
//    every rank's landing slot, which needs no signal; credits keep the root from running
//    two calls ahead.
//  * copy engine (>= CE_MIN_MB): every rank's pull as cudaMemcpyAsync between two handshakes.
//  * rooted pull (otherwise), per block pair: the root signals START and waits for END; the
//    others pull their part of x_0 into y between the two, by register loads or TMA (MECH).
// Block b of every rank pairs with block b of every other rank (grid agreed at setup).
#include "mgk_primitives.cuh"

namespace prim = mgk::prim;

// ---- config: tuning knobs (the tuner rebuilds with -DNAME=value). The defaults not set here
// are those of primitives/collective/knobs.cuh, which makes `config` of them.
// mgk:tune BLOCKS 0 16 32 66 264
// mgk:tune THREADS 256 512 1024
// mgk:tune UNROLL 2 4 8
// mgk:tune MECH 0 1  // 0: register loads, 1: TMA bulk copies
// mgk:tune CE_MIN_MB 16 64 256 1048576  // 1048576: never use the copy engine
// mgk:tune LAMPORT_MAX_KB 0 256 1024 4096 16384
// mgk:tune LAMPORT_LAG 1 2 4  // the local copies trail the sends by this many steps
#include "collective/knobs.cuh"

using collective = prim::rooted_copy_collective<prim::rooted_layout::broadcast, config>;
MGK_COLLECTIVE_ENTRY_POINTS(collective)
