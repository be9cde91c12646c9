#include "common/versions.h"

#include <gtest/gtest.h>

namespace mgk {
namespace {

TEST(Versions, CudaAndNcclIntegersAreWrittenAsTheirUsersReadThem) {
  EXPECT_EQ(cuda_version(13000), "13.0");
  EXPECT_EQ(cuda_version(12080), "12.8");
  EXPECT_EQ(cuda_version(0), "?");
  EXPECT_EQ(nccl_version(22803), "2.28.3");
  EXPECT_EQ(nccl_version(21903), "2.19.3");
  EXPECT_EQ(nccl_version(2708), "2.7.8");  // the scheme before NCCL 2.9
  EXPECT_EQ(nccl_version(0), "?");
  EXPECT_EQ(sm_name("9.0"), "sm_90");
  EXPECT_EQ(sm_name("10.0"), "sm_100");
}

}  // namespace
}  // namespace mgk
