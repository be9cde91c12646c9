#include "common/versions.h"

namespace mgk {

std::string cuda_version(int version) {
  if (version <= 0) return "?";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string nccl_version(int version) {
  if (version <= 0) return "?";
  const int major_unit = version >= 10000 ? 10000 : 1000;
  return std::to_string(version / major_unit) + "." + std::to_string(version % major_unit / 100) +
         "." + std::to_string(version % 100);
}

std::string sm_name(const std::string& compute_capability) {
  std::string digits;
  for (char c : compute_capability)
    if (c != '.') digits += c;
  return "sm_" + digits;
}

}  // namespace mgk
