// Aggregator: flags, bounded waits, epochs, block and grid barriers across GPUs (device
// side; allocating the flags at setup is host/flag_setup.cuh).
#pragma once
#include "bounded_wait.cuh"
#include "epoch.cuh"
#include "flag_ops.cuh"
#include "grid_barrier.cuh"
#include "peer_signals.cuh"
