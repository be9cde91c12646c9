// Paths the tests need: the build tree (for the mgk and mgk-harness binaries), the tests
// tree (for bad candidates and fixtures), and fresh temporary directories.
#pragma once
#include <filesystem>
#include <string>

namespace mgk::test {

std::filesystem::path build_dir();
std::filesystem::path tests_dir();
std::filesystem::path source_dir();  // the project root (problems/, primitives/, ...)
std::filesystem::path mgk_binary();
// Where tests leave files for people to look at (screenshots, reports): $MGK_TEST_ARTIFACTS,
// else build_dir()/test-artifacts; created if missing.
std::filesystem::path artifacts_dir();
// An MGK_HOME every test process shares (build_dir()/test-home/mgk), for tests that compile
// but do not test the compile cache: ctest runs each test in a process of its own, so a
// reference compiled by one is a hit for the next. Safe to share: a cache key holds every
// byte that decides a build, and an entry lands by rename.
std::filesystem::path shared_mgk_home();

// A new empty directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "mgk-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace mgk::test
