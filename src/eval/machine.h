// What the GPU side of this machine looks like, asked of `mgk-harness probe` (so mgk itself
// needs no CUDA driver), and its measured ceilings from `mgk-harness calibrate`.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mgk::eval {

struct GpuInfo {
  int index = 0;
  std::string name;
  int sms = 0;
  long long memory_bytes = 0;
  long long l2_bytes = 0;
  std::string cc;  // "9.0"
  std::string uuid;         // "GPU-..." (CUDA_VISIBLE_DEVICES takes it); empty if unknown
  std::string device_node;  // "/dev/nvidia3"; empty if the driver does not say
};

struct PeerLink {
  int src = 0, dst = 0;
  bool access = false, native_atomics = false;
};

struct MachineInfo {
  std::vector<GpuInfo> gpus;
  std::vector<PeerLink> peers;
  int driver_version = 0, runtime_version = 0, nccl_version = 0;
  std::string error;   // why no GPU could be queried, when gpus is empty
  bool no_gpu = false;  // the probe said cleanly: no driver, or a driver that sees no GPU
  std::string gpu_model() const { return gpus.empty() ? "none" : gpus.front().name; }
  // A stable key for calibrations and tuning results: model x count, driver.
  std::string machine_key() const;
};

// Peak rates for the roofline, from `mgk calibrate` (per GPU and the slowest peer link).
struct Peaks {
  double hbm_bytes_per_s = 0;
  double flops_per_s = 0;       // dense bf16 tensor, cuBLAS
  double link_bytes_per_s = 0;  // one direction, per GPU
  static Peaks from_calibration(const nlohmann::json& calibration);
};

std::filesystem::path harness_path();    // $MGK_HARNESS, else mgk-harness beside mgk
std::filesystem::path candidate_path();  // $MGK_CANDIDATE, else mgk-candidate beside mgk

// Runs `mgk-harness probe`. Never throws for a machine without GPUs: error says why.
MachineInfo probe_machine();

// Runs `mgk-harness calibrate` on the given GPUs (empty: all). Throws on failure.
nlohmann::json run_calibration(const std::vector<int>& gpus);

// The CUDA arch flag for a compute capability: "9.0" -> "sm_90a".
std::string arch_for(const std::string& cc);

}  // namespace mgk::eval
