// mgk doctor: one OK/FAIL/WARN line per thing mgk needs, each failure with its fix.
#include <unistd.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/env.h"
#include "common/env.h"
#include "process/run.h"
#include "eval/compile.h"
#include "eval/machine.h"

namespace mgk::cli {

namespace {

struct Doctor {
  int failures = 0;
  void ok(const std::string& what) { std::cout << "OK    " << what << "\n"; }
  void warn(const std::string& what) { std::cout << "WARN  " << what << "\n"; }
  void fail(const std::string& what, const std::string& fix) {
    ++failures;
    std::cout << "FAIL  " << what << "\n      fix: " << fix << "\n";
  }
};

std::string version_line(const std::string& out) {
  auto pos = out.rfind("release");
  if (pos == std::string::npos) return "";
  return out.substr(pos, out.find('\n', pos) - pos);
}

ExitCode run_doctor(const Globals& g) {
  Doctor d;
  try {
    auto r = process::run_tool({eval::nvcc_path(), "--version"}, std::chrono::seconds(30));
    if (r.exit_code == 0) d.ok("nvcc: " + eval::nvcc_path() + " (" + version_line(r.output) + ")");
    else d.fail("nvcc: " + eval::nvcc_path() + " does not run", "install the CUDA toolkit or set MGK_NVCC");
  } catch (const Error& e) {
    d.fail("nvcc: not found (" + std::string(e.what()) + ")", "install the CUDA toolkit (/usr/local/cuda/bin/nvcc) or set MGK_NVCC");
  }
  auto harness = eval::harness_path();
  if (access(harness.c_str(), X_OK) == 0) d.ok("harness: " + harness.string());
  else d.fail("harness: " + harness.string() + " missing", "rebuild mgk (scripts/setup.sh) or set MGK_HARNESS");
  auto root = root_dir();
  if (std::filesystem::exists(root / "problems") && std::filesystem::exists(root / "sandbox/include/mgk/abi.h"))
    d.ok("suite: " + root.string());
  else d.fail("suite: no problems/ or sandbox/include under " + root.string(), "set MGK_ROOT to the mgk source tree");

  eval::MachineInfo m = eval::probe_machine();
  if (m.gpus.empty()) {
    d.fail("GPUs: none visible (" + m.error + ")",
           "run on a machine with NVIDIA GPUs and their driver; check CUDA_VISIBLE_DEVICES; 'mgk eval --compile-only' works without");
  } else {
    for (const auto& gpu : m.gpus)
      d.ok("GPU " + std::to_string(gpu.index) + ": " + gpu.name + ", " + std::to_string(gpu.sms) + " SMs, " +
           std::to_string(gpu.memory_bytes >> 30) + " GiB, sm_" + gpu.cc);
    d.ok("CUDA driver " + std::to_string(m.driver_version) + ", runtime " + std::to_string(m.runtime_version) +
         ", NCCL " + std::to_string(m.nccl_version));
    for (const auto& p : m.peers) {
      std::string pair = "peer access GPU " + std::to_string(p.src) + " -> " + std::to_string(p.dst);
      if (p.access) d.ok(pair + (p.native_atomics ? " (native atomics)" : " (no native atomics)"));
      else d.fail(pair + ": not possible", "use GPUs on one NVLink/NVSwitch domain (nvidia-smi topo -m)");
    }
    if (m.gpus.size() < 2)
      d.warn("only one GPU visible: timing a multi-GPU kernel needs at least 2; ranks can share this one to "
             "check correctness (mgk eval ... --gpus 0,0)");
  }
  auto nvls = env("NCCL_NVLS_ENABLE");
  if (nvls && *nvls != "0")
    d.fail("NCCL_NVLS_ENABLE=" + *nvls, "unset it or set it to 0: NVLink multicast must stay off (mgk forces it off for its own runs)");
  else d.ok("NVLink multicast off (NCCL_NVLS_ENABLE " + (nvls ? "= " + *nvls : std::string("unset; mgk sets 0")) + ")");
  if (auto cvd = env("CUDA_VISIBLE_DEVICES")) d.ok("CUDA_VISIBLE_DEVICES=" + *cvd + " (respected)");
  try {
    auto store = open_store(g);
    d.ok("store: " + store.path().string());
    if (!m.gpus.empty()) {
      if (store.latest_calibration(machine_key(m))) d.ok("calibration: present for " + m.machine_key());
      else d.warn("calibration: none for " + m.machine_key() + " (run 'mgk calibrate' for roofline fractions)");
    }
  } catch (const Error& e) {
    d.fail(std::string("store: ") + e.what(), "pass --db PATH or set MGK_DB to a writable file");
  }
  if (access("/usr/bin/bwrap", X_OK) == 0) d.ok("sandbox isolation: bubblewrap found");
  else d.warn("sandbox isolation: bubblewrap not installed (shell-mode commands run without namespaces); apt-get install bubblewrap");
  for (const char* key : {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"})
    if (env(key)) d.ok(std::string(key) + " is set");
    else d.warn(std::string(key) + " is not set (needed only for that provider)");
  std::cout << (d.failures ? std::to_string(d.failures) + " problem(s) found\n" : "all checks passed\n");
  return d.failures ? ExitCode::kInfrastructure : ExitCode::kOk;
}

}  // namespace

void add_doctor_command(CLI::App& root, Globals& g) {
  CLI::App* c = root.add_subcommand("doctor", "Check this machine: nvcc, GPUs, peer access, NCCL, environment, store");
  c->callback([&g] { g.exit_code = run_doctor(g); });
}

}  // namespace mgk::cli
