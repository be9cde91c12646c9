// Aggregator: whole collectives, host and device, generic over their layout. A solution
// instantiates one with its layout and config (its tuning knobs) and forwards the three
// ABI entry points to it (entry.cuh). reduction (all-reduce, reduce-scatter), exchange
// (all-gather, all-to-all), rooted_copy_collective (broadcast, scatter, gather),
// rooted_reduce (reduce).
#pragma once
#include "entry.cuh"
#include "exchange.cuh"
#include "reduction.cuh"
#include "rooted.cuh"
