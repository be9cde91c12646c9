// Aggregator: symmetric buffers and peer pointers.
#pragma once
#include "host_views.cuh"
#include "sym_view.cuh"
