// Expert gather on the mgk primitives: y_0[s*C + i] = x_s[i] (root 0; the other ranks' y is
// empty, though symmetric). Pure data movement on bytes, on the rooted template
// (primitives/collective/rooted.cuh). By the chunk size:
//  * Lamport one-shot (a multiple of 16 bytes, <= LAMPORT_MAX_KB): every rank pushes x into
//    its landing slot on the root, which needs no signal; credits pace the senders.
//  * copy engine (>= CE_MIN_MB): every rank's push as cudaMemcpyAsync between two handshakes.
//  * rooted push (otherwise), per block pair: START from the root, every rank pushes x into
//    its chunk of y_0 (all GPUs' SMs work at once), END to the root; register stores or TMA
//    (MECH).
// Block b of every rank pairs with block b of every other rank (grid agreed at setup).
#include "mgk_primitives.cuh"

namespace prim = mgk::prim;

// ---- config: tuning knobs (the tuner rebuilds with -DNAME=value). The defaults not set here
// are those of primitives/collective/knobs.cuh, which makes `config` of them.
// mgk:tune BLOCKS 0 16 32 66 264
// mgk:tune THREADS 256 512 1024
// mgk:tune UNROLL 2 4 8
// mgk:tune MECH 0 1  // 0: register stores, 1: TMA bulk copies
// mgk:tune CE_MIN_MB 16 64 256 1048576  // 1048576: never use the copy engine
// mgk:tune LAMPORT_MAX_KB 0 256 1024 4096 16384
// mgk:tune LAMPORT_LAG 1 2 4  // the local copies trail the sends by this many steps
#include "collective/knobs.cuh"

using collective = prim::rooted_copy_collective<prim::rooted_layout::gather, config>;
MGK_COLLECTIVE_ENTRY_POINTS(collective)
