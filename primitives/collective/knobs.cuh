// The tuning knobs of a solution written on a collective template (reduction.cuh,
// exchange.cuh, rooted.cuh), as the experts problems/collectives/*/expert.cu use them: each
// knob a macro the tuner sets with -DNAME=value, its default below, then `config`, the
// struct of constants the templates read (each template says which; the others go unused).
//
// A solution includes this file after its own knob defaults, so that a default of its own
// (`#ifndef LAMPORT_LAG` / `#define LAMPORT_LAG 4` / `#endif` before the include) wins over
// the one here. It declares the knobs it tunes, with their values, by its own markers
// (`// mgk:tune NAME values...`, src/tune/README.md); the tuner finds the defaults of the
// others here, since it reads the files a kernel includes with #include "...". Not part of
// mgk_primitives.cuh: these macro names (BLOCKS, THREADS, ...) are only for a solution that
// asks for them.
#pragma once
#include <cstddef>

#ifndef BLOCKS
#define BLOCKS 0  // 0: one block per SM
#endif
#ifndef THREADS
#define THREADS 512
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef ONE_SHOT_MAX_KB
#define ONE_SHOT_MAX_KB 1024  // the flagged (or Lamport, for reductions) one-shot up to this size
#endif
#ifndef ONE_SHOT_W2
#define ONE_SHOT_W2 1  // reductions, two ranks: the Lamport one-shot at every size
#endif
#ifndef LAMPORT
#define LAMPORT 1  // reductions: the one-shot on Lamport slots (0: flagged)
#endif
#ifndef LAMPORT_MAX_KB
#define LAMPORT_MAX_KB 1024  // the Lamport one-shot up to this size
#endif
#ifndef LAMPORT_LAG
#define LAMPORT_LAG 1  // the consuming side trails the sends by this many steps
#endif
#ifndef MECH
#define MECH 0  // what moves the bytes outside the one-shots: 0: registers, 1: TMA bulk copies
#endif
#ifndef CE_MIN_MB
#define CE_MIN_MB 64  // the copy engine from this size on; 1048576: never
#endif
#ifndef CE_STREAMS
#define CE_STREAMS 2  // the copy engine's side streams
#endif

// Unnamed namespace: the kernels instantiated with it are this solution's own (internal
// linkage), as when each expert declared its config itself.
namespace {
struct config {
  static constexpr int blocks = BLOCKS, threads = THREADS, unroll = UNROLL, lamport_lag = LAMPORT_LAG;
  static constexpr int mech = MECH, ce_streams = CE_STREAMS;
  static constexpr size_t one_shot_max_bytes = size_t(ONE_SHOT_MAX_KB) * 1024;
  static constexpr size_t lamport_max_bytes = size_t(LAMPORT_MAX_KB) * 1024, ce_min_bytes = size_t(CE_MIN_MB) << 20;
  static constexpr bool one_shot_w2 = ONE_SHOT_W2, lamport = LAMPORT;
};
}  // namespace
