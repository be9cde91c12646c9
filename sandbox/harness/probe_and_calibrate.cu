#include "probe_and_calibrate.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mgk::harness {

namespace {

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

std::vector<int> parse_gpus(int argc, char** argv, int count) {
  std::vector<int> g;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--gpus") == 0) {
      std::stringstream ss(argv[i + 1]);
      std::string item;
      while (std::getline(ss, item, ',')) g.push_back(std::stoi(item));
    }
  if (g.empty())
    for (int i = 0; i < count; ++i) g.push_back(i);
  return g;
}

__global__ void fill_bf16(__nv_bfloat16* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    p[i] = __float2bfloat16(float(h & 0xffff) / 65536.0f - 0.5f);
  }
}

// 16-byte stores from `blocks` SMs into `dst` (possibly a peer's memory).
__global__ void copy16(const int4* __restrict__ src, int4* __restrict__ dst, size_t n16) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n16; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

template <typename F>
double median_ms(F&& body, int reps, cudaStream_t s) {
  cudaEvent_t a, b;
  ck(cudaEventCreate(&a), "event");
  ck(cudaEventCreate(&b), "event");
  body();  // warm-up
  ck(cudaStreamSynchronize(s), "warm-up");
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    ck(cudaEventRecord(a, s), "record");
    body();
    ck(cudaEventRecord(b, s), "record");
    ck(cudaEventSynchronize(b), "sync");
    float ms;
    ck(cudaEventElapsedTime(&ms, a, b), "elapsed");
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

nlohmann::json calibrate_gpu(int dev) {
  ck(cudaSetDevice(dev), "set device");
  cudaStream_t s;
  ck(cudaStreamCreate(&s), "stream");
  const size_t bytes = size_t(1) << 30;
  void *a, *b;
  ck(cudaMalloc(&a, bytes), "alloc");
  ck(cudaMalloc(&b, bytes), "alloc");
  ck(cudaMemset(a, 1, bytes), "memset");
  double copy_ms = median_ms([&] { ck(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s), "copy"); }, 10, s);
  double hbm = 2.0 * bytes / (copy_ms * 1e-3);  // read + write
  ck(cudaFree(a), "free");
  ck(cudaFree(b), "free");

  const int n = 8192;
  __nv_bfloat16 *A, *B, *C;
  ck(cudaMalloc(&A, sizeof(__nv_bfloat16) * n * n), "alloc");
  ck(cudaMalloc(&B, sizeof(__nv_bfloat16) * n * n), "alloc");
  ck(cudaMalloc(&C, sizeof(__nv_bfloat16) * n * n), "alloc");
  fill_bf16<<<1024, 256, 0, s>>>(A, size_t(n) * n, 1);
  fill_bf16<<<1024, 256, 0, s>>>(B, size_t(n) * n, 2);
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed");
  cublasSetStream(h, s);
  float one = 1, zero = 0;
  double gemm_ms = median_ms(
      [&] {
        if (cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, CUDA_R_16BF, n, B, CUDA_R_16BF, n, &zero, C,
                         CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
          throw std::runtime_error("cublasGemmEx failed");
      },
      10, s);
  double flops = 2.0 * n * double(n) * n / (gemm_ms * 1e-3);
  cublasDestroy(h);
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
  cudaStreamDestroy(s);
  cudaDeviceProp p;
  ck(cudaGetDeviceProperties(&p, dev), "props");
  return {{"gpu", dev}, {"name", p.name}, {"hbm_bytes_per_s", hbm}, {"bf16_flops_per_s", flops}};
}

nlohmann::json calibrate_pair(int src, int dst) {
  int ok = 0;
  ck(cudaDeviceCanAccessPeer(&ok, src, dst), "can access peer");
  if (!ok) return {{"src", src}, {"dst", dst}, {"peer_access", false}};
  ck(cudaSetDevice(src), "set device");
  cudaError_t e = cudaDeviceEnablePeerAccess(dst, 0);
  if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) ck(e, "enable peer access");
  cudaGetLastError();
  const size_t bytes = size_t(256) << 20;
  void *a, *b;
  ck(cudaMalloc(&a, bytes), "alloc");
  ck(cudaSetDevice(dst), "set device");
  ck(cudaMalloc(&b, bytes), "alloc");
  ck(cudaSetDevice(src), "set device");
  ck(cudaMemset(a, 3, bytes), "memset");
  cudaStream_t s;
  ck(cudaStreamCreate(&s), "stream");
  double ce_ms = median_ms([&] { ck(cudaMemcpyPeerAsync(b, dst, a, src, bytes, s), "peer copy"); }, 10, s);
  cudaDeviceProp p;
  ck(cudaGetDeviceProperties(&p, src), "props");
  double sm_ms = median_ms(
      [&] {
        copy16<<<p.multiProcessorCount, 1024, 0, s>>>(static_cast<const int4*>(a), static_cast<int4*>(b), bytes / 16);
        ck(cudaGetLastError(), "copy16");
      },
      10, s);
  cudaStreamDestroy(s);
  cudaFree(a);
  ck(cudaSetDevice(dst), "set device");
  cudaFree(b);
  double ce = bytes / (ce_ms * 1e-3), sm = bytes / (sm_ms * 1e-3);
  return {{"src", src},
          {"dst", dst},
          {"peer_access", true},
          {"copy_engine_bytes_per_s", ce},
          {"sm_store_bytes_per_s", sm},
          {"bytes_per_s", std::max(ce, sm)}};
}

}  // namespace

namespace {
// "GPU-8-4-4-4-12" hex, as CUDA_VISIBLE_DEVICES takes a GPU by its UUID.
std::string uuid_text(const cudaUUID_t& u) {
  static const char* hex = "0123456789abcdef";
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    const auto b = static_cast<unsigned char>(u.bytes[i]);
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s;
}

// The device node of the GPU at PCI address `bus` ("0000:19:00.0"), from the driver's own
// description of it; empty when the driver does not say.
std::string device_node(std::string bus) {
  for (auto& c : bus) c = char(std::tolower(static_cast<unsigned char>(c)));
  std::ifstream in("/proc/driver/nvidia/gpus/" + bus + "/information");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Device Minor:", 0) == 0) return "/dev/nvidia" + std::to_string(std::stoi(line.substr(13)));
  return "";
}
}  // namespace

int probe_main() {
  nlohmann::json j;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  // No driver, or a driver that sees no GPU: a machine without GPUs, said cleanly (exit 0,
  // an empty list and why). Any other failure is a broken installation and exits non-zero,
  // so that nothing mistakes it for "no GPU here".
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
    j["gpus"] = nlohmann::json::array();
    j["no_gpu"] = e == cudaErrorNoDevice ? "the CUDA driver sees no GPU" : "no CUDA driver (libcuda.so.1) on this machine";
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  if (e != cudaSuccess) {
    std::fprintf(stderr, "mgk-harness probe: cudaGetDeviceCount: %s (%s)\n", cudaGetErrorString(e),
                 cudaGetErrorName(e));
    return 3;
  }
  int driver = 0, runtime = 0, nccl = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  ncclGetVersion(&nccl);
  j["cuda_driver_version"] = driver;
  j["cuda_runtime_version"] = runtime;
  j["nccl_version"] = nccl;
  j["gpus"] = nlohmann::json::array();
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    char bus[32] = {};
    cudaDeviceGetPCIBusId(bus, sizeof(bus), d);
    j["gpus"].push_back({{"index", d},
                         {"name", p.name},
                         {"sms", p.multiProcessorCount},
                         {"memory_bytes", p.totalGlobalMem},
                         {"l2_bytes", p.l2CacheSize},
                         {"cc", std::to_string(p.major) + "." + std::to_string(p.minor)},
                         {"pci_bus", bus},
                         {"uuid", uuid_text(p.uuid)},
                         {"device_node", device_node(bus)}});
  }
  nlohmann::json peers = nlohmann::json::array();
  for (int a = 0; a < count; ++a)
    for (int b = 0; b < count; ++b) {
      if (a == b) continue;
      int ok = 0, atomics = 0;
      cudaDeviceCanAccessPeer(&ok, a, b);
      cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, a, b);
      peers.push_back({{"src", a}, {"dst", b}, {"access", ok != 0}, {"native_atomics", atomics != 0}});
    }
  j["peer_access"] = peers;
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

int calibrate_main(int argc, char** argv) {
  try {
    int count = 0;
    ck(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    std::vector<int> gpus = parse_gpus(argc, argv, count);
    nlohmann::json j;
    j["gpus"] = nlohmann::json::array();
    for (int g : gpus) j["gpus"].push_back(calibrate_gpu(g));
    j["pairs"] = nlohmann::json::array();
    for (int a : gpus)
      for (int b : gpus)
        if (a != b) j["pairs"].push_back(calibrate_pair(a, b));
    std::printf("%s\n", j.dump().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mgk-harness calibrate: %s\n", e.what());
    return 3;
  }
}

}  // namespace mgk::harness
