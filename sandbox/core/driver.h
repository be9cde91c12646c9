// The CUDA driver functions the rank processes need (virtual memory management), fetched
// through the runtime (cudaGetDriverEntryPointByVersion) instead of linking libcuda.so.1:
// a machine without a driver can then still start mgk-harness, which answers "no GPU"
// cleanly instead of failing to load.
#pragma once
#include <cuda.h>

#include <string>

namespace mgk::sandbox {

struct Driver {
  CUresult (*mem_create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long);
  CUresult (*mem_export)(void*, CUmemGenericAllocationHandle, CUmemAllocationHandleType, unsigned long long);
  CUresult (*mem_import)(CUmemGenericAllocationHandle*, void*, CUmemAllocationHandleType);
  CUresult (*mem_reserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long);
  CUresult (*mem_map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
  CUresult (*mem_set_access)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t);
  CUresult (*mem_unmap)(CUdeviceptr, size_t);
  CUresult (*mem_address_free)(CUdeviceptr, size_t);
  CUresult (*mem_release)(CUmemGenericAllocationHandle);
  CUresult (*mem_granularity)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags);
  CUresult (*error_string)(CUresult, const char**);
  CUresult (*device_get)(CUdevice*, int);
  CUresult (*primary_ctx_state)(CUdevice, unsigned int*, int*);
};

// Loaded on first use; throws std::runtime_error naming the missing function.
const Driver& driver();

// Throws std::runtime_error("what: <driver's message>") unless r is CUDA_SUCCESS.
void check(CUresult r, const char* what);

}  // namespace mgk::sandbox
