// The bucketing step of gnn's variable-size exchanges (sparse_embedding_all2all,
// sparse_feature_fetch_projection): each id's owner, round robin (id mod W), and the
// per-owner counts, for a stable radix sort by owner over bits_for(W) bits.
#pragma once
#include <cstdint>

namespace gnn {

// The bits a radix sort needs for owners 0 .. w - 1 (at least one).
inline int bits_for(int w) {
  int b = 1;
  while ((1 << b) < w) ++b;
  return b;
}

// owner[i] = ids[i] mod W, slot[i] = i, and counts[owner] += 1 (counts zeroed before).
__global__ void owners_kernel(const int64_t* ids, int64_t n, int world, int* owner, int* slot, int64_t* counts) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int o = int(ids[i] % world);
    owner[i] = o;
    slot[i] = int(i);
    atomicAdd(reinterpret_cast<unsigned long long*>(counts + o), 1ull);
  }
}

}  // namespace gnn
