#include "support/test_paths.h"

#include <cstdlib>
#include <random>
#include <system_error>

namespace mgk::test {

// The environment overrides the compiled-in paths so that test binaries built on one
// machine run on another (the GPU machine gets the binaries, not the build tree).
std::filesystem::path build_dir() {
  const char* e = std::getenv("MGK_TEST_BUILD_DIR");
  return e && *e ? e : MGK_BUILD_DIR;
}
std::filesystem::path tests_dir() {
  const char* e = std::getenv("MGK_TEST_SOURCE_DIR");
  return e && *e ? e : MGK_TESTS_DIR;
}
std::filesystem::path source_dir() { return tests_dir().parent_path(); }
std::filesystem::path mgk_binary() { return build_dir() / "mgk"; }

std::filesystem::path artifacts_dir() {
  const char* e = std::getenv("MGK_TEST_ARTIFACTS");
  std::filesystem::path dir = e && *e ? std::filesystem::path(e) : build_dir() / "test-artifacts";
  std::filesystem::create_directories(dir);
  return dir;
}

std::filesystem::path shared_mgk_home() {
  std::filesystem::path dir = build_dir() / "test-home" / "mgk";
  std::filesystem::create_directories(dir);
  return dir;
}

TempDir::TempDir(const std::string& prefix) {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto p = std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(rd()));
    std::error_code ec;
    if (std::filesystem::create_directory(p, ec)) {
      path_ = p;
      return;
    }
  }
  std::abort();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace mgk::test
