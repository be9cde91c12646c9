#include "common/format.h"

#include <gtest/gtest.h>

namespace mgk {
namespace {

TEST(Fixed, PrintsExactlyTheDigitsAskedFor) {
  EXPECT_EQ(fixed(1.234, 1), "1.2");
  EXPECT_EQ(fixed(1.25, 0), "1");
  EXPECT_EQ(fixed(63.4, 2), "63.40");
  EXPECT_EQ(fixed(-0.005, 1), "-0.0");
  EXPECT_EQ(fixed(892123.456, 1), "892123.5");
}

}  // namespace
}  // namespace mgk
