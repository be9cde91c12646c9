// Host side: the epoch of each call (sync/epoch.cuh says why flags carry epochs). One per
// solution state; next() at the top of every mgk_run gives 1, 2, 3, ..., the same sequence
// on every rank because every rank makes the same calls.
#pragma once
#include <stdint.h>

namespace mgk::prim {

struct epoch_counter {
  uint64_t value = 0;
  uint64_t next() { return ++value; }
};

}  // namespace mgk::prim
