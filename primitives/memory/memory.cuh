// Aggregator: symmetric buffers as kernels see them (sym_view: my copy and every peer's).
// Making views from the ABI's objects is host work: host/views.cuh.
#pragma once
#include "sym_view.cuh"
