#include "eval/calibration.h"

#include <string>

namespace mgk::eval {

store::MachineKey machine_key(const MachineInfo& m) {
  return {m.gpu_model(), int(m.gpus.size()), std::to_string(m.driver_version)};
}

std::optional<Peaks> calibrated_peaks(store::Store& store, const MachineInfo& m) {
  if (m.gpus.empty()) return std::nullopt;
  auto c = store.latest_calibration(machine_key(m));
  if (!c) return std::nullopt;
  return Peaks::from_calibration(*c);
}

}  // namespace mgk::eval
