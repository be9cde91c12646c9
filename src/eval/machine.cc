#include "eval/machine.h"

#include <algorithm>

#include "common/env.h"
#include "common/error.h"
#include "process/run.h"

namespace mgk::eval {

std::filesystem::path harness_path() {
  if (auto p = env("MGK_HARNESS")) return *p;
  return self_dir() / "mgk-harness";
}

std::filesystem::path candidate_path() {
  if (auto p = env("MGK_CANDIDATE")) return *p;
  return self_dir() / "mgk-candidate";
}

std::string MachineInfo::machine_key() const {
  return gpu_model() + " x" + std::to_string(gpus.size()) + " driver " + std::to_string(driver_version);
}

Peaks Peaks::from_calibration(const nlohmann::json& c) {
  Peaks p;
  double hbm = 0, flops = 0, link = 0;
  bool first = true;
  for (const auto& g : c.value("gpus", nlohmann::json::array())) {
    double h = g.value("hbm_bytes_per_s", 0.0), f = g.value("bf16_flops_per_s", 0.0);
    hbm = first ? h : std::min(hbm, h);
    flops = first ? f : std::min(flops, f);
    first = false;
  }
  first = true;
  for (const auto& l : c.value("pairs", nlohmann::json::array())) {
    if (!l.value("peer_access", false)) continue;
    double b = l.value("bytes_per_s", 0.0);
    link = first ? b : std::min(link, b);
    first = false;
  }
  p.hbm_bytes_per_s = hbm;
  p.flops_per_s = flops;
  p.link_bytes_per_s = link;
  return p;
}

MachineInfo probe_machine() {
  MachineInfo m;
  process::ProcessResult r;
  try {
    r = process::run_tool({harness_path().string(), "probe"}, std::chrono::seconds(60));
  } catch (const Error& e) {
    m.error = e.what();
    return m;
  }
  if (r.exit_code != 0) {
    m.error = "mgk-harness probe failed (" + r.status_line(60) + "): " + r.output.substr(0, 300);
    return m;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  } catch (const std::exception& e) {
    m.error = std::string("mgk-harness probe printed no JSON: ") + r.output.substr(0, 200);
    return m;
  }
  m.error = j.value("no_gpu", "");
  m.no_gpu = j.contains("no_gpu");
  m.driver_version = j.value("cuda_driver_version", 0);
  m.runtime_version = j.value("cuda_runtime_version", 0);
  m.nccl_version = j.value("nccl_version", 0);
  for (const auto& g : j.value("gpus", nlohmann::json::array()))
    m.gpus.push_back({g.value("index", 0), g.value("name", ""), g.value("sms", 0), g.value("memory_bytes", 0ll),
                      g.value("l2_bytes", 0ll), g.value("cc", ""), g.value("uuid", ""), g.value("device_node", "")});
  for (const auto& p : j.value("peer_access", nlohmann::json::array()))
    m.peers.push_back({p.value("src", 0), p.value("dst", 0), p.value("access", false), p.value("native_atomics", false)});
  return m;
}

nlohmann::json run_calibration(const std::vector<int>& gpus) {
  std::vector<std::string> argv = {harness_path().string(), "calibrate"};
  if (!gpus.empty()) {
    std::string list;
    for (int g : gpus) list += (list.empty() ? "" : ",") + std::to_string(g);
    argv.push_back("--gpus");
    argv.push_back(list);
  }
  process::ProcessResult r = process::run_tool(argv, std::chrono::minutes(5));
  if (r.exit_code != 0) throw Error("calibration failed: " + r.output.substr(0, 500));
  return nlohmann::json::parse(r.output.substr(r.output.find('{')));
}

std::string arch_for(const std::string& cc) {
  std::string digits;
  for (char c : cc)
    if (c != '.') digits += c;
  if (digits.empty()) return "sm_90a";
  // Hopper's arch-specific features (wgmma, setmaxnreg) need the 'a' target.
  return "sm_" + digits + (digits == "90" ? "a" : "");
}

}  // namespace mgk::eval
