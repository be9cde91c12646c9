#include "common/file.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/test_paths.h"

namespace mgk {
namespace {

TEST(ReadFile, ReturnsTheBytesAndNamesWhatIsMissing) {
  test::TempDir dir;
  std::ofstream(dir.path() / "a.txt", std::ios::binary) << std::string("x\0y\n", 4);
  EXPECT_EQ(read_file(dir.path() / "a.txt"), std::string("x\0y\n", 4));
  try {
    read_file(dir.path() / "missing.cu", "kernel file", ExitCode::kUsage);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read kernel file " + (dir.path() / "missing.cu").string());
  }
  try {
    read_file(dir.path() / "VERSION", "prompt file");
    FAIL();
  } catch (const UsageError&) {
    FAIL() << "mgk's own files are not the user's input";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInfrastructure);
  }
}

}  // namespace
}  // namespace mgk
