// Expert reduce on the mgk primitives: y_0 = sum over ranks of x (root 0; the other ranks' y
// is empty, though symmetric), bf16 or fp32 summed in fp32, on the rooted template
// (primitives/collective/rooted.cuh). By size:
//  * Lamport one-shot (a multiple of 16 bytes, <= LAMPORT_MAX_KB): every rank pushes x into
//    its landing slot on the root, which sums its x with what lands; credits pace the senders.
//  * two-shot to the root (larger): rank r sums 1/W of the vector, pulled from every rank,
//    into the root's y: every GPU sums a share, and the root receives 2(W-1)/W of the data
//    instead of W-1 times it. Between a start and an end handshake.
// Block b of every rank pairs with block b of every other rank (grid agreed at setup).
#include "mgk_primitives.cuh"

namespace prim = mgk::prim;

// ---- config: tuning knobs (the tuner rebuilds with -DNAME=value). The defaults not set here
// are those of primitives/collective/knobs.cuh, which makes `config` of them.
// mgk:tune BLOCKS 0 32 66 264
// mgk:tune THREADS 256 512 1024
// mgk:tune UNROLL 1 2 4
// mgk:tune LAMPORT_MAX_KB 0 256 1024 4096 16384
// mgk:tune LAMPORT_LAG 1 2 4  // the sums trail the sends by this many steps
#include "collective/knobs.cuh"

using collective = prim::rooted_reduce<config>;
MGK_COLLECTIVE_ENTRY_POINTS(collective)
