// Device helpers of mgk-compute-bench (fill.cu): random inputs as the harness draws them,
// and an L2 flush between timed calls.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

#include "mgk/abi.h"

namespace mgk::bench {

// `numel` elements of `gen`'s distribution (rank 0) at `data`.
cudaError_t fill(const mgk_input_gen& gen, void* data, int64_t numel, cudaStream_t s);

// Writes `bytes` at `scratch` (larger than L2), so the next call starts with a cold cache.
cudaError_t flush_l2(void* scratch, size_t bytes, cudaStream_t s);

}  // namespace mgk::bench
