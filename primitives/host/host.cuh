// Aggregator: what mgk_setup and mgk_run call on the host. Views of the ABI's buffers and
// tensors, symmetric allocation and setup-time agreement (views), the paired grid and its
// flags (flag_setup), the epoch of each call (epoch_counter), and the landing memory of
// one-shot pushes (landing_memory). The copy engine's host API is in mechanism/.
#pragma once
#include "epoch_counter.cuh"
#include "flag_setup.cuh"
#include "landing_memory.cuh"
#include "views.cuh"
