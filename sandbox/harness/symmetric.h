// The trusted rank's device buffers that other processes map: symmetric ones (the same size
// on every rank, every rank's mapped on every GPU of the group, exchanged through the
// launcher) and private ones (this rank's alone). Every buffer keeps its descriptors, one
// per rank, so that the candidate process can be given the very same memory.
#pragma once
#include <cstddef>
#include <deque>
#include <vector>

#include "broker_client.h"
#include "driver.h"
#include "vmm.h"

namespace mgk::harness {

struct SharedBuffer {
  sandbox::Mapping mapping;  // as mapped here
  std::vector<int> fds;      // index = rank (one for a private buffer); closed with the pool
  bool symmetric = false;
};

class BufferPool {
 public:
  BufferPool(BrokerClient& broker, int rank, int world, int device)
      : broker_(broker), rank_(rank), world_(world), device_(device) {}
  ~BufferPool() { release_all(); }
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // Collective: every rank calls with the same bytes. Zero-filled, visible to every GPU.
  const SharedBuffer& symmetric(size_t bytes);
  // This rank's alone (but exportable): zero-filled.
  const SharedBuffer& private_buffer(size_t bytes);
  void release_all();
  int world() const { return world_; }

 private:
  BrokerClient& broker_;
  int rank_, world_, device_;
  std::deque<SharedBuffer> buffers_;  // deque: references stay valid
};

}  // namespace mgk::harness
