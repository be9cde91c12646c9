// Aggregator: flags, bounded waits, epochs, block and grid barriers across GPUs.
#pragma once
#include "bounded_wait.cuh"
#include "epoch.cuh"
#include "flag_ops.cuh"
#include "flag_setup.cuh"
#include "grid_barrier.cuh"
#include "peer_signals.cuh"
