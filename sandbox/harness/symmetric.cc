#include "symmetric.h"

#include <cuda_runtime.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

namespace mgk::harness {

namespace {
void rt_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
}  // namespace

const SharedBuffer& BufferPool::symmetric(size_t bytes) {
  const size_t mapped = sandbox::round_up(bytes, sandbox::allocation_granularity(device_));
  CUmemGenericAllocationHandle mine = sandbox::create_physical(mapped, device_);
  int my_fd = -1;
  std::vector<int> fds;
  try {
    my_fd = sandbox::export_fd(mine);
    fds = broker_.exchange_fd(my_fd, bytes);
    ::close(my_fd);
    if (int(fds.size()) != world_)
      throw std::runtime_error("symmetric allocation: got " + std::to_string(fds.size()) + " handles");
  } catch (...) {
    if (my_fd >= 0) ::close(my_fd);
    for (int fd : fds) ::close(fd);
    sandbox::driver().mem_release(mine);
    throw;
  }
  std::vector<CUmemGenericAllocationHandle> handles(world_);
  handles[rank_] = mine;
  for (int r = 0; r < world_; ++r)
    if (r != rank_) handles[r] = sandbox::import_fd(fds[r]);
  SharedBuffer b{sandbox::Mapping(std::move(handles), bytes, mapped, device_, rank_), std::move(fds), true};
  rt_check(cudaMemset(b.mapping.local(), 0, mapped), "zero symmetric memory");
  rt_check(cudaDeviceSynchronize(), "symmetric allocation sync");
  // Nobody may write a peer's buffer before that peer has zeroed it.
  broker_.barrier();
  buffers_.push_back(std::move(b));
  return buffers_.back();
}

const SharedBuffer& BufferPool::private_buffer(size_t bytes) {
  const size_t mapped = sandbox::round_up(bytes, sandbox::allocation_granularity(device_));
  CUmemGenericAllocationHandle h = sandbox::create_physical(mapped, device_);
  int fd = sandbox::export_fd(h);
  SharedBuffer b{sandbox::Mapping({h}, bytes, mapped, device_, 0), {fd}, false};
  rt_check(cudaMemset(b.mapping.local(), 0, mapped), "zero private memory");
  buffers_.push_back(std::move(b));
  return buffers_.back();
}

void BufferPool::release_all() {
  if (buffers_.empty()) return;
  cudaDeviceSynchronize();
  for (auto& b : buffers_)
    for (int fd : b.fds) ::close(fd);
  buffers_.clear();
}

}  // namespace mgk::harness
