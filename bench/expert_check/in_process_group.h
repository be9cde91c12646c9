// The solution ABI's group services (symmetric allocation, host barrier) for ranks that are
// threads of one process, one per GPU, with peer access enabled between all of them. Good
// enough to exercise solutions on a GPU machine without the sandbox harness; the harness
// (one process per rank, VMM memory) remains the reference.
#pragma once
#include <cuda_runtime_api.h>

#include <barrier>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "mgk/abi.h"

namespace mgk::bench {

class InProcessGroup {
 public:
  explicit InProcessGroup(int world);
  ~InProcessGroup();

  int world() const { return world_; }

  // A context for `rank` (its GPU is `rank`), whose sym_alloc and host_barrier talk to this
  // group. `dims` must outlive the context.
  mgk_ctx make_ctx(int rank, const std::vector<const char*>& dim_names, const std::vector<int64_t>& dim_values);

  // Collective: every rank calls it with the same bytes in the same order. Zero-filled
  // cudaMalloc memory on each rank's GPU, the peer table copied to every GPU.
  int sym_alloc(int rank, size_t bytes, mgk_sym_buffer* out, std::string* error);
  void barrier() { barrier_.arrive_and_wait(); }

  // Frees every symmetric allocation (all ranks must be done with them).
  void release_all();

 private:
  struct Allocation {
    std::vector<void*> host_peers;           // [world]
    std::vector<void**> device_tables;       // per rank: device copy of host_peers
  };
  int world_;
  std::barrier<> barrier_;
  std::mutex mutex_;
  std::vector<Allocation> allocations_;
  std::vector<size_t> next_index_;  // per rank: index of its next sym_alloc call
};

}  // namespace mgk::bench
