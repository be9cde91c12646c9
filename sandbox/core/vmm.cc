#include "vmm.h"

#include <cuda_runtime.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "driver.h"

namespace mgk::sandbox {

namespace {
CUmemAllocationProp device_prop(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}
void rt_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
}  // namespace

size_t allocation_granularity(int device) {
  CUmemAllocationProp prop = device_prop(device);
  size_t gran = 0;
  check(driver().mem_granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), "cuMemGetAllocationGranularity");
  return gran;
}

size_t round_up(size_t bytes, size_t granularity) {
  return ((bytes == 0 ? 1 : bytes) + granularity - 1) / granularity * granularity;
}

CUmemGenericAllocationHandle create_physical(size_t mapped, int device) {
  CUmemAllocationProp prop = device_prop(device);
  CUmemGenericAllocationHandle h{};
  check(driver().mem_create(&h, mapped, &prop, 0), "cuMemCreate");
  return h;
}

int export_fd(CUmemGenericAllocationHandle handle) {
  int fd = -1;
  check(driver().mem_export(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), "cuMemExportToShareableHandle");
  return fd;
}

CUmemGenericAllocationHandle import_fd(int fd) {
  CUmemGenericAllocationHandle h{};
  check(driver().mem_import(&h, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)),
                            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
        "cuMemImportFromShareableHandle");
  return h;
}

Mapping::Mapping(std::vector<CUmemGenericAllocationHandle> handles, size_t bytes, size_t mapped, int device,
                 int local)
    : handles_(std::move(handles)), bytes_(bytes), mapped_(mapped), local_(local) {
  try {
    const size_t gran = allocation_granularity(device);
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    for (auto h : handles_) {
      CUdeviceptr ptr = 0;
      check(driver().mem_reserve(&ptr, mapped_, gran, 0, 0), "cuMemAddressReserve");
      host_peers_.push_back(reinterpret_cast<void*>(ptr));
      check(driver().mem_map(ptr, mapped_, 0, h, 0), "cuMemMap");
      check(driver().mem_set_access(ptr, mapped_, &access, 1), "cuMemSetAccess");
    }
    rt_check(cudaMalloc(&device_peers_, sizeof(void*) * host_peers_.size()), "peer table");
    rt_check(cudaMemcpy(device_peers_, host_peers_.data(), sizeof(void*) * host_peers_.size(), cudaMemcpyHostToDevice),
             "peer table copy");
  } catch (...) {
    release();
    throw;
  }
}

Mapping::~Mapping() { release(); }

Mapping::Mapping(Mapping&& o) noexcept { *this = std::move(o); }

Mapping& Mapping::operator=(Mapping&& o) noexcept {
  if (this != &o) {
    release();
    handles_ = std::move(o.handles_);
    host_peers_ = std::move(o.host_peers_);
    device_peers_ = std::exchange(o.device_peers_, nullptr);
    bytes_ = o.bytes_;
    mapped_ = o.mapped_;
    local_ = o.local_;
    o.handles_.clear();
    o.host_peers_.clear();
  }
  return *this;
}

void Mapping::release() {
  if (handles_.empty() && host_peers_.empty()) return;
  cudaDeviceSynchronize();  // nothing may still use the memory
  for (size_t r = 0; r < host_peers_.size(); ++r) {
    auto p = reinterpret_cast<CUdeviceptr>(host_peers_[r]);
    if (p) {
      driver().mem_unmap(p, mapped_);
      driver().mem_address_free(p, mapped_);
    }
  }
  for (auto h : handles_) driver().mem_release(h);
  if (device_peers_) cudaFree(device_peers_);
  device_peers_ = nullptr;
  handles_.clear();
  host_peers_.clear();
}

Mapping map_descriptors(const std::vector<int>& fds, size_t bytes, size_t mapped, int device, int local) {
  std::vector<CUmemGenericAllocationHandle> handles;
  try {
    for (int fd : fds) handles.push_back(import_fd(fd));
  } catch (...) {
    for (auto h : handles) driver().mem_release(h);
    for (int fd : fds) ::close(fd);
    throw;
  }
  for (int fd : fds) ::close(fd);
  return Mapping(std::move(handles), bytes, mapped, device, local);
}

}  // namespace mgk::sandbox
