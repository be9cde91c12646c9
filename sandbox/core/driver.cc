#include "driver.h"

#include <cuda_runtime.h>

#include <stdexcept>

namespace mgk::sandbox {

namespace {
template <typename Fn>
void load(Fn& fn, const char* symbol) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult status{};
  cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &status);
  if (e != cudaSuccess || status != cudaDriverEntryPointSuccess || !p)
    throw std::runtime_error(std::string("the CUDA driver does not provide ") + symbol + " (" +
                             cudaGetErrorString(e) + ")");
  fn = reinterpret_cast<Fn>(p);
}

Driver load_all() {
  Driver d{};
  load(d.mem_create, "cuMemCreate");
  load(d.mem_export, "cuMemExportToShareableHandle");
  load(d.mem_import, "cuMemImportFromShareableHandle");
  load(d.mem_reserve, "cuMemAddressReserve");
  load(d.mem_map, "cuMemMap");
  load(d.mem_set_access, "cuMemSetAccess");
  load(d.mem_unmap, "cuMemUnmap");
  load(d.mem_address_free, "cuMemAddressFree");
  load(d.mem_release, "cuMemRelease");
  load(d.mem_granularity, "cuMemGetAllocationGranularity");
  load(d.error_string, "cuGetErrorString");
  load(d.device_get, "cuDeviceGet");
  load(d.primary_ctx_state, "cuDevicePrimaryCtxGetState");
  return d;
}
}  // namespace

const Driver& driver() {
  static const Driver d = load_all();
  return d;
}

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* s = nullptr;
  driver().error_string(r, &s);
  throw std::runtime_error(std::string(what) + ": " + (s ? s : "unknown CUDA driver error"));
}

}  // namespace mgk::sandbox
