#include "tune/tune_kernel.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace mgk::tune {
namespace {

eval::MachineInfo two_gpus() {
  eval::MachineInfo m;
  m.gpus.push_back(eval::GpuInfo{0, "NVIDIA H200", 132, 0, 0, "9.0"});
  m.gpus.push_back(eval::GpuInfo{1, "NVIDIA H100 80GB HBM3", 132, 0, 0, "9.0"});
  m.driver_version = 13000;
  return m;
}

TEST(Machine, IdentifiesTheGpuByOrdinal) {
  GpuIdentity a = gpu_identity(two_gpus(), 0);
  EXPECT_EQ(a.model, "NVIDIA H200");
  EXPECT_EQ(a.driver, "13000");
  EXPECT_EQ(gpu_identity(two_gpus(), 1).model, "NVIDIA H100 80GB HBM3");
  EXPECT_THROW(gpu_identity(two_gpus(), 2), UsageError);
}

TEST(Machine, NoGpuIsAnErrorWithTheProbesReason) {
  eval::MachineInfo none;
  none.error = "cudaGetDeviceCount: no CUDA-capable device is detected";
  try {
    gpu_identity(none, 0);
    FAIL() << "no GPU must throw";
  } catch (const UsageError&) {
    FAIL() << "not a usage error: the machine has no GPU";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA-capable device"), std::string::npos);
  }
}

}  // namespace
}  // namespace mgk::tune
