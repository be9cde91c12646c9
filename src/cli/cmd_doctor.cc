// mgk doctor: one OK/FAIL/WARN line per thing mgk needs, each failure with its fix.
#include <unistd.h>

#include <iostream>
#include <memory>
#include <vector>

#include "cli/commands.h"
#include "cli/options.h"
#include "eval/calibration.h"
#include "common/versions.h"
#include "common/env.h"
#include "common/interrupt.h"
#include "process/run.h"
#include "eval/compile.h"
#include "eval/machine.h"
#include "llm/config.h"

namespace mgk::cli {

namespace {

// The checks as they are made; printed at the end as lines or as one JSON document.
struct Doctor {
  // `name`: stable across versions and machines, for scripts reading --json ("nvcc",
  // "gpu.0", "peer.0-1", "api_key.openai"); `what` is the line a person reads.
  struct Check {
    std::string name, status, what, fix;  // status: ok, warn, fail
  };
  std::vector<Check> checks;
  int failures = 0;
  void ok(const std::string& name, const std::string& what) { checks.push_back({name, "ok", what, ""}); }
  void warn(const std::string& name, const std::string& what) { checks.push_back({name, "warn", what, ""}); }
  void fail(const std::string& name, const std::string& what, const std::string& fix) {
    ++failures;
    checks.push_back({name, "fail", what, fix});
  }

  void print(bool json) const {
    if (json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& c : checks) {
        j.push_back({{"name", c.name}, {"status", c.status}, {"what", c.what}});
        if (!c.fix.empty()) j.back()["fix"] = c.fix;
      }
      std::cout << nlohmann::json{{"checks", j}, {"failures", failures}}.dump(2) << "\n";
      return;
    }
    for (const auto& c : checks) {
      std::cout << (c.status == "ok" ? "OK    " : c.status == "warn" ? "WARN  " : "FAIL  ") << c.what << "\n";
      if (!c.fix.empty()) std::cout << "      fix: " << c.fix << "\n";
    }
    if (failures == 0) std::cout << "all checks passed\n";
    else std::cout << failures << (failures == 1 ? " check" : " checks") << " failed (FAIL above, each with its fix)\n";
  }
};

std::string version_line(const std::string& out) {
  auto pos = out.rfind("release");
  if (pos == std::string::npos) return "";
  return out.substr(pos, out.find('\n', pos) - pos);
}

ExitCode run_doctor(const Globals& g, bool json) {
  install_interrupt_handler();  // Ctrl-C stops a slow nvcc or GPU probe with it: exit 130
  Doctor d;
  try {
    auto r = process::run_tool({eval::nvcc_path(), "--version"}, std::chrono::seconds(30));
    if (r.exit_code == 0) d.ok("nvcc", "nvcc: " + eval::nvcc_path() + " (" + version_line(r.output) + ")");
    else d.fail("nvcc", "nvcc: " + eval::nvcc_path() + " does not run", "install the CUDA toolkit or set MGK_NVCC");
  } catch (const Error& e) {
    d.fail("nvcc", "nvcc: not found (" + std::string(e.what()) + ")", "install the CUDA toolkit (/usr/local/cuda/bin/nvcc) or set MGK_NVCC");
  }
  auto harness = eval::harness_path();
  if (access(harness.c_str(), X_OK) == 0) d.ok("harness", "harness: " + harness.string());
  else d.fail("harness", "harness: " + harness.string() + " missing", "rebuild mgk (scripts/setup.sh) or set MGK_HARNESS");
  auto root = root_dir();
  if (std::filesystem::exists(root / "problems") && std::filesystem::exists(root / "src/abi/mgk/abi.h"))
    d.ok("suite", "suite: " + root.string());
  else d.fail("suite", "suite: no problems/ or src/abi under " + root.string(), "set MGK_ROOT to the mgk source tree");

  eval::MachineInfo m = eval::probe_machine();
  if (m.gpus.empty()) {
    d.fail("gpus", "GPUs: none visible (" + m.error + ")",
           "run on a machine with NVIDIA GPUs and their driver; check CUDA_VISIBLE_DEVICES; 'mgk eval --compile-only' works without");
  } else {
    for (const auto& gpu : m.gpus)
      d.ok("gpu." + std::to_string(gpu.index), "GPU " + std::to_string(gpu.index) + ": " + gpu.name + ", " + std::to_string(gpu.sms) + " SMs, " +
           std::to_string(gpu.memory_bytes >> 30) + " GiB, " + sm_name(gpu.cc));
    d.ok("cuda", "CUDA driver " + cuda_version(m.driver_version) + ", runtime " + cuda_version(m.runtime_version) +
         ", NCCL " + nccl_version(m.nccl_version));
    for (const auto& p : m.peers) {
      std::string pair = "peer access GPU " + std::to_string(p.src) + " -> " + std::to_string(p.dst);
      const std::string name = "peer." + std::to_string(p.src) + "-" + std::to_string(p.dst);
      if (p.access) d.ok(name, pair + (p.native_atomics ? " (native atomics)" : " (no native atomics)"));
      else d.fail(name, pair + ": not possible", "use GPUs on one NVLink/NVSwitch domain (nvidia-smi topo -m)");
    }
    if (m.gpus.size() < 2)
      d.warn("gpu_count", "only one GPU visible: timing a multi-GPU kernel needs at least 2; ranks can share this one to "
             "check correctness (mgk eval ... --gpus 0,0)");
  }
  auto nvls = env("NCCL_NVLS_ENABLE");
  if (nvls && *nvls != "0")
    d.fail("nvls", "NCCL_NVLS_ENABLE=" + *nvls, "unset it or set it to 0: NVLink multicast must stay off (mgk forces it off for its own runs)");
  else d.ok("nvls", "NVLink multicast off (NCCL_NVLS_ENABLE " + (nvls ? "= " + *nvls : std::string("unset; mgk sets 0")) + ")");
  if (auto cvd = env("CUDA_VISIBLE_DEVICES")) d.ok("cuda_visible_devices", "CUDA_VISIBLE_DEVICES=" + *cvd + " (respected)");
  try {
    auto store = open_store(g);
    d.ok("store", "store: " + store.path().string());
    if (!m.gpus.empty()) {
      if (store.latest_calibration(eval::machine_key(m))) d.ok("calibration", "calibration: present for " + m.machine_key());
      else d.warn("calibration", "calibration: none for " + m.machine_key() + " (run 'mgk calibrate' for roofline fractions)");
    }
  } catch (const Error& e) {
    d.fail("store", std::string("store: ") + e.what(), "pass --db PATH or set MGK_DB to a writable file");
  }
  if (access("/usr/bin/bwrap", X_OK) == 0) d.ok("sandbox", "sandbox isolation: bubblewrap found");
  else d.warn("sandbox", "sandbox isolation: bubblewrap not installed (shell-mode commands run without namespaces); apt-get install bubblewrap");
  try {
    const llm::Config config = llm::load_config();
    for (const auto& [name, endpoint] : config.endpoints) {
      if (!endpoint.api_key_required) continue;
      if (env(endpoint.api_key_env.c_str())) d.ok("api_key." + name, endpoint.api_key_env + " is set (" + name + ":...)");
      else d.warn("api_key." + name, endpoint.api_key_env + " is not set (needed only for " + name + ":... models)");
    }
  } catch (const Error& e) {
    d.fail("config", std::string("model config: ") + e.what(), "fix the file, or unset MGK_CONFIG");
  }
  d.print(json);
  return d.failures ? ExitCode::kInfrastructure : ExitCode::kOk;
}

}  // namespace

void add_doctor_command(CLI::App& root, Globals& g) {
  CLI::App* c = root.add_subcommand("doctor", "Check this machine: nvcc, GPUs, peer access, NCCL, environment, store");
  auto json = std::make_shared<bool>(false);
  c->add_flag("--json", *json, "Print the checks as JSON: {checks: [{name, status, what, fix}], failures}; names are stable (nvcc, harness, "
              "suite, gpus, gpu.N, cuda, peer.S-D, gpu_count, nvls, cuda_visible_devices, store, calibration, sandbox, "
              "api_key.ENDPOINT, config)");
  c->callback([&g, json] { g.exit_code = run_doctor(g, *json); });
}

}  // namespace mgk::cli
