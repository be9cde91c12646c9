#include "eval/preflight.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "common/progress_line.h"
#include "common/error.h"
#include "process/run.h"
#include "eval/compile.h"

namespace mgk::eval {

std::string evaluation_arch(const eval::MachineInfo& machine) {
  return machine.gpus.empty() ? "" : eval::arch_for(machine.gpus.front().cc);
}

namespace {

std::string first_error(const std::string& log) {
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.find("error") != std::string::npos) return line;
  return log.substr(0, log.find('\n'));
}

}  // namespace

void compile_references(const std::vector<problems::Spec>& specs, const std::string& arch) {
  const std::string nvcc = eval::nvcc_path();
  std::vector<std::optional<eval::CompileResult>> results(specs.size());
  std::vector<std::exception_ptr> errors(specs.size());
  std::atomic<size_t> next{0}, done{0};
  ProgressLine line;
  std::mutex line_mutex;
  auto worker = [&] {
    for (size_t i = next++; i < specs.size(); i = next++) {
      try {
        results[i] = eval::compile({specs[i].reference_path(), specs[i].dir, {}, {}, arch, true, ""});
      } catch (...) {
        errors[i] = std::current_exception();
      }
      std::lock_guard lock(line_mutex);
      line.show("compiling the references: " + std::to_string(++done) + "/" + std::to_string(specs.size()));
    }
  };
  const size_t n = std::min<size_t>(specs.size(), std::max(1u, std::thread::hardware_concurrency()));
  line.show("compiling the references: 0/" + std::to_string(specs.size()));
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < specs.size(); ++i) {
    if (errors[i]) std::rethrow_exception(errors[i]);  // Ctrl-C (Interrupted) included
    if (!results[i]->ok)
      throw Error("the reference of " + specs[i].name + " does not compile with " + nvcc + " (" +
                  (results[i]->refusal.empty() ? first_error(results[i]->log) : results[i]->refusal) +
                  "): check the CUDA toolkit and NCCL ('mgk doctor')");
  }
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
  // Under --compile-only nothing runs, so no reference is needed.
  if (!o.compile_references || o.compile_only) return;
  compile_references(specs, evaluation_arch(machine));
}

void report_preflight_for_dry_run(const std::vector<problems::Spec>& specs, const eval::MachineInfo& machine,
                                  bool compile_only) {
  try {
    preflight(specs, machine, {compile_only, false});
    std::cout << "pre-flight: ok (" << (compile_only ? "nvcc; nothing runs, so no reference is compiled"
                                                      : "GPUs, harness, nvcc; the references are compiled by the real run")
              << ")\n";
  } catch (const Error& e) {
    std::cout << "pre-flight: a real run would stop here: " << e.what() << "\n";
  }
}

}  // namespace mgk::eval
