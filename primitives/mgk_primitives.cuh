// mgk primitives: a header-only library of multi-GPU building blocks for kernels that talk
// to other GPUs directly over NVLink (sm_90+). Read README.md in this folder first.
//
//   common/      includes, the device clock, work splits
//   memory/      symmetric buffers as device views (my copy, every peer's)
//   sync/        system-scope signals and bounded waits, epoch flags, block/grid barriers
//   mechanism/   how bytes move: 16-byte ld/st, TMA bulk copies, the copy engine, block_mover
//   math/        16-byte vector arithmetic and block sums (fp32 accumulation)
//   protocol/    how arrival is known: flagged (a signal) or lamport (no signal), credits
//   algorithm/   who sends what to whom: one-shot, two-shot, direct push, rooted copy
//   collective/  whole collectives (host and device) generic over their layout
//   overlap/     SM role split, warp-specialised stage rings, chunked cross-GPU pipelines
//   host/        what mgk_setup / mgk_run call: views, flags and grid, epochs, landing slots
//
// No multicast / multimem / NVSwitch reduction anywhere: the GPUs are shared.
#pragma once
#include "algorithm/algorithm.cuh"
#include "collective/collective.cuh"
#include "common/common.cuh"
#include "host/host.cuh"
#include "math/math.cuh"
#include "mechanism/mechanism.cuh"
#include "memory/memory.cuh"
#include "overlap/overlap.cuh"
#include "protocol/protocol.cuh"
#include "sync/sync.cuh"
