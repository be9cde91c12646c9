#include "support/fakes.h"

#include "support/test_paths.h"

namespace mgk::test {

std::filesystem::path fake(const std::string& program, const std::filesystem::path& dir, const std::string& name) {
  const auto target = build_dir() / "fakes" / program;
  const auto link = dir / name;
  std::error_code ec;
  std::filesystem::remove(link, ec);
  // A hard link (a copy across file systems), not a symlink: the launcher starts the
  // candidate's runner by its real path, and the fakes read their scenario from their name.
  std::filesystem::create_hard_link(target, link, ec);
  if (ec) std::filesystem::copy_file(target, link, std::filesystem::copy_options::overwrite_existing);
  return link;
}

}  // namespace mgk::test
