// mgk primitives: a header-only library of multi-GPU building blocks for kernels that talk
// to other GPUs directly over NVLink (sm_90+). Read README.md in this folder first.
//
//   memory/    symmetric buffers as device views, peer pointers, setup helpers
//   sync/      system-scope signals and bounded waits, epoch flags, block/grid barriers
//   transfer/  register-level 16-byte ld/st, TMA bulk copies, the copy engine, reductions
//   overlap/   SM role split, warp-specialised stage rings, chunked cross-GPU pipelines
//
// No multicast / multimem / NVSwitch reduction anywhere: the GPUs are shared.
#pragma once
#include "common/common.cuh"
#include "memory/memory.cuh"
#include "overlap/overlap.cuh"
#include "sync/sync.cuh"
#include "transfer/transfer.cuh"
