#include "support/fakes.h"

#include "support/test_paths.h"

namespace mgk::test {

std::filesystem::path fake(const std::string& program, const std::filesystem::path& dir, const std::string& name) {
  const auto target = build_dir() / "fakes" / program;
  const auto link = dir / name;
  std::error_code ec;
  std::filesystem::remove(link, ec);
  std::filesystem::create_symlink(target, link);
  return link;
}

}  // namespace mgk::test
