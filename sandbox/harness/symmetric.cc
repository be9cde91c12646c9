#include "symmetric.h"

#include <cuda_runtime.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

namespace mgk::harness {

namespace {
void cu_check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* s = nullptr;
    cuGetErrorString(r, &s);
    throw std::runtime_error(std::string(what) + ": " + (s ? s : "unknown CUDA driver error"));
  }
}
void rt_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
}  // namespace

const SymAllocation& SymmetricHeap::allocate(size_t bytes) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device_;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t gran = 0;
  cu_check(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), "cuMemGetAllocationGranularity");
  SymAllocation a;
  a.bytes = bytes;
  a.mapped = ((bytes == 0 ? 1 : bytes) + gran - 1) / gran * gran;
  a.handles.resize(world_);
  a.host_peers.resize(world_);

  cu_check(cuMemCreate(&a.handles[rank_], a.mapped, &prop, 0), "cuMemCreate");
  int my_fd = -1;
  cu_check(cuMemExportToShareableHandle(&my_fd, a.handles[rank_], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
           "cuMemExportToShareableHandle");
  std::vector<int> fds = broker_.exchange_fd(my_fd, bytes);
  ::close(my_fd);
  if (int(fds.size()) != world_) throw std::runtime_error("symmetric allocation: got " + std::to_string(fds.size()) + " handles");

  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device_;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  for (int r = 0; r < world_; ++r) {
    if (r != rank_) {
      cu_check(cuMemImportFromShareableHandle(&a.handles[r], reinterpret_cast<void*>(static_cast<uintptr_t>(fds[r])),
                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
               "cuMemImportFromShareableHandle");
    }
    ::close(fds[r]);
    CUdeviceptr ptr = 0;
    cu_check(cuMemAddressReserve(&ptr, a.mapped, gran, 0, 0), "cuMemAddressReserve");
    cu_check(cuMemMap(ptr, a.mapped, 0, a.handles[r], 0), "cuMemMap");
    cu_check(cuMemSetAccess(ptr, a.mapped, &access, 1), "cuMemSetAccess");
    a.host_peers[r] = reinterpret_cast<void*>(ptr);
  }
  rt_check(cudaMemset(a.host_peers[rank_], 0, a.mapped), "zero symmetric memory");
  rt_check(cudaMalloc(&a.device_peers, sizeof(void*) * world_), "peer table");
  rt_check(cudaMemcpy(a.device_peers, a.host_peers.data(), sizeof(void*) * world_, cudaMemcpyHostToDevice), "peer table copy");
  rt_check(cudaDeviceSynchronize(), "symmetric allocation sync");
  // Nobody may write a peer's buffer before that peer has zeroed it.
  broker_.barrier();
  allocations_.push_back(std::move(a));
  return allocations_.back();
}

void SymmetricHeap::release_all() {
  if (allocations_.empty()) return;
  cudaDeviceSynchronize();
  for (auto& a : allocations_) {
    for (int r = 0; r < world_; ++r) {
      CUdeviceptr p = reinterpret_cast<CUdeviceptr>(a.host_peers[r]);
      if (p) {
        cuMemUnmap(p, a.mapped);
        cuMemAddressFree(p, a.mapped);
      }
      cuMemRelease(a.handles[r]);
    }
    cudaFree(a.device_peers);
  }
  allocations_.clear();
}

}  // namespace mgk::harness
