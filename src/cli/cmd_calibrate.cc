// mgk calibrate: measure this machine's ceilings (HBM, bf16 tensor FLOP/s, peer links) for
// the roofline, and store them.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "eval/calibration.h"
#include "common/versions.h"
#include "common/interrupt.h"
#include "common/log.h"

namespace mgk::cli {

namespace {

struct CalibrateArgs {
  std::string gpus;
  bool show = false, json = false;
};

void print(const nlohmann::json& c) {
  for (const auto& g : c["gpus"])
    std::printf("GPU %d %s: HBM %.0f GB/s (copy, read+write), bf16 dense %.0f TFLOP/s (cuBLAS)\n", g["gpu"].get<int>(),
                g["name"].get<std::string>().c_str(), g["hbm_bytes_per_s"].get<double>() / 1e9,
                g["bf16_flops_per_s"].get<double>() / 1e12);
  for (const auto& p : c["pairs"]) {
    if (!p.value("peer_access", false)) {
      std::printf("GPU %d -> %d: no peer access\n", p["src"].get<int>(), p["dst"].get<int>());
      continue;
    }
    std::printf("GPU %d -> %d: copy engine %.0f GB/s, SM stores %.0f GB/s (one direction)\n", p["src"].get<int>(),
                p["dst"].get<int>(), p["copy_engine_bytes_per_s"].get<double>() / 1e9,
                p["sm_store_bytes_per_s"].get<double>() / 1e9);
  }
  eval::Peaks k = eval::Peaks::from_calibration(c);
  std::printf("roofline peaks: HBM %.0f GB/s, bf16 %.0f TFLOP/s, link %.0f GB/s\n", k.hbm_bytes_per_s / 1e9,
              k.flops_per_s / 1e12, k.link_bytes_per_s / 1e9);
}

// --show reads the store only, so it needs no GPU: the newest calibration of every machine
// the store has one of (usually one).
ExitCode show_calibrations(const CalibrateArgs& a, const Globals& g) {
  auto store = open_store_to_read(g);
  auto found = store.latest_calibrations();
  if (found.empty())
    throw NotFoundError("no calibration stored in " + store.path().string() +
                        ": run 'mgk calibrate' on the GPU machine");
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& [machine, c] : found)
      j.push_back({{"gpu_model", machine.gpu_model}, {"gpu_count", machine.gpu_count},
                   {"driver", machine.driver}, {"calibration", c}});
    std::cout << j.dump(2) << "\n";
    return ExitCode::kOk;
  }
  for (const auto& [machine, c] : found) {
    // Machine keys hold the driver as CUDA reports it (13000); people read 13.0.
    const bool numeric = !machine.driver.empty() &&
                         machine.driver.find_first_not_of("0123456789") == std::string::npos;
    std::cout << machine.gpu_count << " x " << machine.gpu_model << ", CUDA driver "
              << (numeric ? cuda_version(std::stoi(machine.driver)) : machine.driver) << ":\n";
    print(c);
  }
  return ExitCode::kOk;
}

ExitCode run_calibrate(const CalibrateArgs& a, const Globals& g) {
  if (a.show) return show_calibrations(a, g);
  install_interrupt_handler();  // Ctrl-C stops the probe or the calibration run with it: exit 130
  eval::MachineInfo m = eval::probe_machine();
  if (m.gpus.empty()) throw Error("no GPU visible (" + m.error + "): nothing to calibrate");
  auto store = open_store(g);
  std::vector<int> gpus = a.gpus.empty() ? std::vector<int>{} : parse_int_list(a.gpus, "--gpus");
  log::info("calibrating " + m.machine_key() + " (about a minute)...");
  nlohmann::json c = eval::run_calibration(gpus);
  store.record_calibration(eval::machine_key(m), c);
  if (a.json) std::cout << c.dump(2) << "\n";
  else print(c);
  return ExitCode::kOk;
}

}  // namespace

void add_calibrate_command(CLI::App& root, Globals& g) {
  auto a = std::make_shared<CalibrateArgs>();
  CLI::App* c = root.add_subcommand("calibrate", "Measure HBM bandwidth, bf16 FLOP/s and peer bandwidth; store them for the roofline");
  c->add_option("--gpus", a->gpus, "GPUs to measure, e.g. 0,1 (default: all visible)");
  c->add_flag("--show", a->show,
              "Print the stored calibrations (the newest of each machine) instead of measuring; "
              "needs no GPU");
  c->add_flag("--json", a->json, "JSON output");
  c->callback([a, &g] { g.exit_code = run_calibrate(*a, g); });
}

}  // namespace mgk::cli
