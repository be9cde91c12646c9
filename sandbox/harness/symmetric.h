// Symmetric memory through CUDA's virtual memory management API: each rank creates a
// physical allocation, exports it as a POSIX file descriptor, the launcher passes every
// rank's descriptor to every rank, and each rank maps all of them into its address space.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <deque>
#include <vector>

#include "broker_client.h"

namespace mgk::harness {

struct SymAllocation {
  std::vector<void*> host_peers;  // [world]; host_peers[rank] is local
  void** device_peers = nullptr;  // cudaMalloc'd copy of host_peers
  size_t bytes = 0;               // as requested
  size_t mapped = 0;              // rounded up to the granularity
  std::vector<CUmemGenericAllocationHandle> handles;
};

class SymmetricHeap {
 public:
  SymmetricHeap(BrokerClient& broker, int rank, int world, int device)
      : broker_(broker), rank_(rank), world_(world), device_(device) {}
  ~SymmetricHeap() { release_all(); }

  // Collective: every rank calls with the same bytes. Zero-filled, visible to every GPU.
  const SymAllocation& allocate(size_t bytes);
  void release_all();

 private:
  BrokerClient& broker_;
  int rank_, world_, device_;
  std::deque<SymAllocation> allocations_;  // deque: references stay valid
};

}  // namespace mgk::harness
