// Aggregator: the three transfer mechanisms (register-level ld/st, TMA bulk copies, the copy
// engine) and the vector arithmetic reductions use.
#pragma once
#include "block_copy.cuh"
#include "block_mover.cuh"
#include "block_reduce.cuh"
#include "copy_engine.cuh"
#include "flagless_exchange.cuh"
#include "flagless_push.cuh"
#include "one_shot.cuh"
#include "rooted_copy.cuh"
#include "tma_bulk.cuh"
#include "vec_io.cuh"
#include "vec_math.cuh"
