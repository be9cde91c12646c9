#include "common/file.h"

#include <gtest/gtest.h>

#include <filesystem>
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

TEST(WriteFileAtomically, LeavesTheNewTextAndNoTemporary) {
  test::TempDir dir;
  const auto path = dir.path() / "best.cu";
  write_file_atomically(path, "one\n");
  write_file_atomically(path, "two\n");
  EXPECT_EQ(read_file(path), "two\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            1);  // no temporary left behind
  EXPECT_THROW(write_file_atomically(dir.path() / "missing" / "best.cu", "x"), Error);
}

}  // namespace
}  // namespace mgk
