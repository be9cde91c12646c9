#include "eval/provenance.h"

#include <regex>

#include "common/versions.h"
#include "eval/compile.h"

namespace mgk::eval {

std::string nvcc_release(const std::string& output) {
  static const std::regex release(R"(release ([0-9.]+), (V[0-9.]+))");
  std::smatch m;
  return std::regex_search(output, m, release) ? m[1].str() + " (" + m[2].str() + ")" : "";
}

nlohmann::json evaluation_provenance(const MachineInfo* machine, const std::vector<int>& gpus, const std::string& arch,
                                     bool calibrated) {
  nlohmann::json p = {{"mgk", MGK_VERSION}, {"nvcc", nvcc_release(nvcc_version())}, {"arch", arch}};
  if (!machine) return p;
  p["cuda_driver"] = cuda_version(machine->driver_version);
  p["cuda_runtime"] = cuda_version(machine->runtime_version);
  p["nccl"] = nccl_version(machine->nccl_version);
  p["gpu"] = machine->gpu_model();
  p["gpus"] = gpus.size();
  p["calibrated"] = calibrated;
  return p;
}

}  // namespace mgk::eval
