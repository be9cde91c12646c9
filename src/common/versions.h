// The version numbers CUDA and NCCL report as integers, written the way their users read
// them (doctor prints these; the stored machine keys keep the integers).
#pragma once
#include <string>

namespace mgk {

// cudaDriverGetVersion / cudaRuntimeGetVersion: 1000 * major + 10 * minor. 13000 -> "13.0",
// 12080 -> "12.8". 0 (unknown) -> "?".
std::string cuda_version(int version);

// ncclGetVersion: 10000 * major + 100 * minor + patch since 2.9 (before: 1000 * major +
// 100 * minor + patch). 22803 -> "2.28.3", 2708 -> "2.7.8". 0 -> "?".
std::string nccl_version(int version);

// A compute capability as nvcc names the target: "9.0" -> "sm_90", "10.0" -> "sm_100".
std::string sm_name(const std::string& compute_capability);

}  // namespace mgk
