#include "check.h"

#include <stdexcept>

#include "mgk/dtype_table.h"
#include "mgk/gen.cuh"

namespace mgk::harness {

namespace {

__device__ double load_as_double(const void* p, mgk_dtype t, int64_t i) {
  switch (t) {
    case MGK_BF16: return double(__bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]));
    case MGK_F16: return double(__half2float(static_cast<const __half*>(p)[i]));
    case MGK_F32: return double(static_cast<const float*>(p)[i]);
    case MGK_F64: return static_cast<const double*>(p)[i];
    case MGK_I32: return double(static_cast<const int32_t*>(p)[i]);
    case MGK_I64: return double(static_cast<const int64_t*>(p)[i]);
    case MGK_U8: return double(static_cast<const uint8_t*>(p)[i]);
    case MGK_E4M3: case MGK_E5M2: return mgk::fp8_to_double(t, static_cast<const uint8_t*>(p)[i]);
  }
  return 0;
}

__global__ void fill_kernel(mgk_input_gen gen, int rank, void* data, int64_t numel) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < numel;
       i += int64_t(gridDim.x) * blockDim.x)
    mgk::store_value(data, gen.dtype, i, mgk::gen_value(gen, rank, i));
}

__global__ void hash_kernel(const unsigned char* p, size_t bytes, unsigned long long* out) {
  unsigned long long acc = 0;
  size_t words = bytes / 8;
  const unsigned long long* w = reinterpret_cast<const unsigned long long*>(p);
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < words; i += size_t(gridDim.x) * blockDim.x)
    acc += mgk::mix64(w[i] ^ mgk::mix64(i + 1));
  size_t tail_start = words * 8;
  if (blockIdx.x == 0 && threadIdx.x < bytes - tail_start)
    acc += mgk::mix64(uint64_t(p[tail_start + threadIdx.x]) + (uint64_t(threadIdx.x + 1) << 40));
  atomicAdd(out, acc);
}

struct DeviceOutcome {
  unsigned long long failures;
  unsigned long long first_index;  // ~0ull when none
  unsigned int worst_bits;         // the largest error ratio, a non-negative float's bits (which order as the floats do)
};

// The element's error ratio (tolerance.h) as a float; integers are compared exactly (0).
__device__ float element_ratio(const void* got, mgk_dtype t, const void* expected, const float* scale,
                               const CheckSpec& spec, int64_t i) {
  if (t == MGK_I32 || t == MGK_I64 || t == MGK_U8) return 0.0f;
  const double r = error_ratio(spec, load_as_double(got, t, i), static_cast<const double*>(expected)[i],
                               scale ? double(scale[i]) : 0.0);
  return r > 3.0e38 ? 3.0e38f : float(r);
}

__device__ bool element_ok(const void* got, mgk_dtype t, const void* expected, const float* scale,
                           const CheckSpec& spec, int64_t i) {
  bool is_int = (t == MGK_I32 || t == MGK_I64 || t == MGK_U8);
  if (is_int) {
    long long g = (t == MGK_I64) ? static_cast<const int64_t*>(got)[i] : (long long)load_as_double(got, t, i);
    return g == static_cast<const long long*>(expected)[i];
  }
  return float_element_ok(spec, load_as_double(got, t, i), static_cast<const double*>(expected)[i],
                          scale ? double(scale[i]) : 0.0);
}

__global__ void check_kernel(const void* got, mgk_dtype t, int64_t numel, const void* expected,
                             const float* scale, CheckSpec spec, DeviceOutcome* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < numel;
       i += int64_t(gridDim.x) * blockDim.x) {
    if (!element_ok(got, t, expected, scale, spec, i)) {
      atomicAdd(&out->failures, 1ull);
      atomicMin(&out->first_index, (unsigned long long)i);
    }
    const float r = element_ratio(got, t, expected, scale, spec, i);
    if (r > 0) atomicMax(&out->worst_bits, __float_as_uint(r));
  }
}

int grid_for(int64_t n) {
  int64_t blocks = (n + 255) / 256;
  return int(blocks < 1 ? 1 : (blocks > 4096 ? 4096 : blocks));
}

void throw_if(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

void fill_input(const mgk_input_gen& gen, int rank, void* data, int64_t numel, cudaStream_t s) {
  if (numel == 0) return;
  fill_kernel<<<grid_for(numel), 256, 0, s>>>(gen, rank, data, numel);
  throw_if(cudaGetLastError(), "fill_input launch");
}

void hash_bytes(const void* data, size_t bytes, unsigned long long* out_device, cudaStream_t s) {
  throw_if(cudaMemsetAsync(out_device, 0, sizeof(unsigned long long), s), "hash memset");
  if (bytes == 0) return;
  hash_kernel<<<grid_for(int64_t(bytes / 8) + 1), 256, 0, s>>>(static_cast<const unsigned char*>(data), bytes, out_device);
  throw_if(cudaGetLastError(), "hash launch");
}

CheckOutcome check_output(const void* got, mgk_dtype dtype, int64_t numel, const void* expected,
                          const float* scale, const CheckSpec& spec, cudaStream_t s) {
  CheckOutcome o;
  if (numel == 0) return o;
  DeviceOutcome* d = nullptr;
  throw_if(cudaMallocAsync(&d, sizeof(DeviceOutcome), s), "check alloc");
  DeviceOutcome init{0, ~0ull, 0u};
  throw_if(cudaMemcpyAsync(d, &init, sizeof(init), cudaMemcpyHostToDevice, s), "check init");
  check_kernel<<<grid_for(numel), 256, 0, s>>>(got, dtype, numel, expected, scale, spec, d);
  throw_if(cudaGetLastError(), "check launch");
  DeviceOutcome h{};
  throw_if(cudaMemcpyAsync(&h, d, sizeof(h), cudaMemcpyDeviceToHost, s), "check readback");
  throw_if(cudaFreeAsync(d, s), "check free");
  throw_if(cudaStreamSynchronize(s), "check sync");
  o.failures = h.failures;
  float worst = 0;
  memcpy(&worst, &h.worst_bits, sizeof(worst));
  o.worst_ratio = worst;
  if (h.failures == 0) return o;
  o.first_index = (long long)h.first_index;
  // Details of the first failing element, read on the host.
  size_t esz = dtype_size(dtype);
  unsigned char gbuf[8] = {};
  throw_if(cudaMemcpy(gbuf, static_cast<const char*>(got) + esz * h.first_index, esz, cudaMemcpyDeviceToHost), "detail got");
  double ev = 0;
  if (dtype_is_float(dtype)) {
    throw_if(cudaMemcpy(&ev, static_cast<const double*>(expected) + h.first_index, 8, cudaMemcpyDeviceToHost), "detail exp");
  } else {
    long long iv = 0;
    throw_if(cudaMemcpy(&iv, static_cast<const long long*>(expected) + h.first_index, 8, cudaMemcpyDeviceToHost), "detail exp");
    ev = double(iv);
  }
  double gv = 0;
  switch (dtype) {
    case MGK_BF16: { uint32_t b = uint32_t(gbuf[0] | (gbuf[1] << 8)) << 16; float f; memcpy(&f, &b, 4); gv = f; break; }
    case MGK_F16: { __half h16; memcpy(&h16, gbuf, 2); gv = double(__half2float(h16)); break; }
    case MGK_F32: { float f; memcpy(&f, gbuf, 4); gv = f; break; }
    case MGK_F64: memcpy(&gv, gbuf, 8); break;
    case MGK_I32: { int32_t v; memcpy(&v, gbuf, 4); gv = v; break; }
    case MGK_I64: { int64_t v; memcpy(&v, gbuf, 8); gv = double(v); break; }
    case MGK_U8: gv = gbuf[0]; break;
    case MGK_E4M3: case MGK_E5M2: gv = mgk::fp8_to_double(dtype, gbuf[0]); break;
  }
  o.got = gv;
  o.expected = ev;
  o.got_nan = gv != gv;
  float sc = 0;
  if (scale) throw_if(cudaMemcpy(&sc, scale + h.first_index, 4, cudaMemcpyDeviceToHost), "detail scale");
  o.bound = allowed_error(spec, ev, sc);
  return o;
}

}  // namespace mgk::harness
