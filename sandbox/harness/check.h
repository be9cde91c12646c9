// GPU-side judging helpers of the trusted harness: input filling, hashing, comparing outputs
// with the oracle.
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

#include <string>

#include "mgk/abi.h"
#include "tolerance.h"

namespace mgk::harness {

void fill_input(const mgk_input_gen& gen, int rank, void* data, int64_t numel, cudaStream_t s);

// Order-independent 64-bit hash of `bytes` bytes (sum of mixed words), into *out_device.
void hash_bytes(const void* data, size_t bytes, unsigned long long* out_device, cudaStream_t s);

// Result of comparing one output with its expected values, read back to the host.
struct CheckOutcome {
  unsigned long long failures = 0;
  long long first_index = -1;  // first failing element (flat index)
  double got = 0, expected = 0, bound = 0;
  bool got_nan = false;
  double worst_ratio = 0;  // the largest |got - expected| / allowed error (tolerance.h's error_ratio)
};

// Compares `numel` elements of `got` (dtype) with `expected` (double, or int64 for integer
// dtypes) and `scale` (for kRounding). Synchronous on `s`.
CheckOutcome check_output(const void* got, mgk_dtype dtype, int64_t numel, const void* expected,
                          const float* scale, const CheckSpec& spec, cudaStream_t s);

}  // namespace mgk::harness
