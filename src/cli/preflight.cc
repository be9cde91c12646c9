#include "cli/preflight.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "common/error.h"
#include "process/run.h"
#include "eval/compile.h"

namespace mgk::cli {

std::string evaluation_arch(const eval::MachineInfo& machine) {
  return machine.gpus.empty() ? "" : eval::arch_for(machine.gpus.front().cc);
}

void preflight(const std::vector<problems::Spec>& specs, const eval::MachineInfo& machine,
               const PreflightOptions& o) {
  if (!o.compile_only) {
    if (machine.gpus.empty())
      throw Error("no GPU to judge kernels on (" + (machine.error.empty() ? "none found" : machine.error) +
                  "); run 'mgk doctor', or use --compile-only to have kernels only compiled");
    if (!std::filesystem::exists(eval::harness_path()))
      throw Error("the per-rank harness " + eval::harness_path().string() +
                  " is missing: build it with scripts/setup.sh, or point MGK_HARNESS at it");
  }
  const std::string nvcc = eval::nvcc_path();
  process::ProcessResult version;
  try {
    version = process::run_tool({nvcc, "--version"}, std::chrono::seconds(60));
  } catch (const Error& e) {
    throw Error("nvcc cannot be run (" + std::string(e.what()) +
                "): install the CUDA toolkit, or set MGK_NVCC to its nvcc");
  }
  if (version.exit_code != 0)
    throw Error("'" + nvcc + " --version' failed: " + version.output.substr(0, version.output.find('\n')) +
                " (install the CUDA toolkit, or set MGK_NVCC)");
  if (!o.compile_references) return;
  const std::string arch = evaluation_arch(machine);
  for (const problems::Spec& spec : specs) {
    eval::CompileResult r = eval::compile({spec.reference_path(), spec.dir, {}, {}, arch, true});
    if (!r.ok) {
      std::istringstream log(r.log);
      std::string line, first;
      while (std::getline(log, line))
        if (line.find("error") != std::string::npos) {
          first = line;
          break;
        }
      throw Error("the reference of " + spec.name + " does not compile with " + nvcc + " (" +
                  (first.empty() ? r.log.substr(0, r.log.find('\n')) : first) +
                  "): check the CUDA toolkit and NCCL ('mgk doctor')");
    }
  }
}

void report_preflight_for_dry_run(const std::vector<problems::Spec>& specs, const eval::MachineInfo& machine,
                                  bool compile_only) {
  try {
    preflight(specs, machine, {compile_only, false});
    std::cout << "pre-flight: ok (" << (compile_only ? "nvcc" : "GPUs, harness, nvcc")
              << "; the references are compiled by the real run)\n";
  } catch (const Error& e) {
    std::cout << "pre-flight: a real run would stop here: " << e.what() << "\n";
  }
}

}  // namespace mgk::cli
