#include "tune/machine.h"

#include "common/error.h"

namespace mgk::tune {

GpuIdentity gpu_identity(const eval::MachineInfo& machine, int gpu) {
  if (machine.gpus.empty())
    throw Error("no GPU to tune on (the tuning cache is keyed by GPU model and driver): " +
                (machine.error.empty() ? std::string("the probe found none") : machine.error));
  for (const auto& g : machine.gpus)
    if (g.index == gpu) return GpuIdentity{g.name, std::to_string(machine.driver_version)};
  throw UsageError("GPU " + std::to_string(gpu) + " is not visible; this machine has " +
                   std::to_string(machine.gpus.size()) + " (see 'mgk doctor')");
}

}  // namespace mgk::tune
