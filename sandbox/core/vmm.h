// Device memory that several processes map: CUDA virtual memory management with POSIX file
// descriptors as the shareable handles. The trusted rank process creates every buffer a
// candidate sees and passes the descriptors over a Unix socket; each process maps what it is
// given. A mapping owns its handles and address ranges and undoes them when destroyed.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <vector>

namespace mgk::sandbox {

size_t allocation_granularity(int device);
size_t round_up(size_t bytes, size_t granularity);

CUmemGenericAllocationHandle create_physical(size_t mapped, int device);
int export_fd(CUmemGenericAllocationHandle handle);  // the caller owns the descriptor
CUmemGenericAllocationHandle import_fd(int fd);      // does not close it

// One buffer as mapped into this process: one pointer per rank for a symmetric buffer,
// one for a private one, plus a device-side copy of the pointer table for kernels.
class Mapping {
 public:
  Mapping() = default;
  // Maps every handle (index = rank) read-write for `device`; takes ownership of them.
  // `local` is this process's rank (0 for a private buffer).
  Mapping(std::vector<CUmemGenericAllocationHandle> handles, size_t bytes, size_t mapped, int device, int local);
  ~Mapping();
  Mapping(Mapping&& o) noexcept;
  Mapping& operator=(Mapping&& o) noexcept;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  void* local() const { return host_peers_.empty() ? nullptr : host_peers_[local_]; }
  const std::vector<void*>& host_peers() const { return host_peers_; }
  void** device_peers() const { return device_peers_; }
  size_t bytes() const { return bytes_; }
  size_t mapped() const { return mapped_; }

 private:
  void release();
  std::vector<CUmemGenericAllocationHandle> handles_;
  std::vector<void*> host_peers_;
  void** device_peers_ = nullptr;
  size_t bytes_ = 0, mapped_ = 0;
  int local_ = 0;
};

// Imports the descriptors (index = rank) and maps them; closes the descriptors.
Mapping map_descriptors(const std::vector<int>& fds, size_t bytes, size_t mapped, int device, int local);

}  // namespace mgk::sandbox
