// Inter-SM overlap: split the grid by block index into two roles that run side by side on
// different SMs, typically communication blocks (moving data over NVLink) and compute
// blocks (GEMM tiles, reductions), talking through flags in memory. Communication needs
// few SMs with TMA (~15 saturate NVLink), many with register-level transfers (~76+).
#pragma once
#include "../common/base.cuh"

namespace mgk::prim {

// The first `first_blocks` blocks of the grid take the first role, the rest the second.
// Both roles must make progress without waiting on blocks that are not resident: size the
// grid with resident_blocks() when the roles wait on each other.
struct role_split {
  int first_blocks;

  MGK_DEV bool first() const { return int(blockIdx.x) < first_blocks; }
  // This block's index within its role, and how many blocks share the role.
  MGK_DEV int index() const { return first() ? int(blockIdx.x) : int(blockIdx.x) - first_blocks; }
  MGK_DEV int count() const { return first() ? first_blocks : int(gridDim.x) - first_blocks; }
};

}  // namespace mgk::prim
