#include "agent/host_paths.h"

#include <algorithm>
#include <cctype>

#include "common/env.h"
#include "eval/compile.h"

namespace mgk::agent {

namespace fs = std::filesystem;

namespace {
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'; }
}  // namespace

HostPaths::HostPaths(std::vector<std::pair<fs::path, std::string>> folders) {
  for (auto& [dir, stand_in] : folders) {
    std::string d = dir.lexically_normal().string();
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    if (d.size() > 1) folders_.emplace_back(d, stand_in);
  }
  std::stable_sort(folders_.begin(), folders_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

HostPaths HostPaths::of_this_machine(const fs::path& sandbox) {
  const fs::path root = root_dir();
  std::vector<std::pair<fs::path, std::string>> folders = {{fs::absolute(sandbox), ""},
                                                             {fs::absolute(home_dir()), ""}};
  // Where #include finds them: <mgk/solution.h>, <collective/...>.
  for (const fs::path& dir : eval::mgk_header_dirs(/*is_reference=*/true)) folders.emplace_back(dir, "");
  folders.emplace_back(root, "");
  // Followed links, as the compiler may print them.
  for (size_t i = 0, n = folders.size(); i < n; ++i) {
    std::error_code ec;
    fs::path real = fs::canonical(folders[i].first, ec);
    if (!ec && real != folders[i].first) folders.emplace_back(real, folders[i].second);
  }
  if (auto home = env("HOME")) folders.emplace_back(*home, "~");
  return HostPaths(std::move(folders));
}

std::string HostPaths::relative(std::string text) const {
  for (const auto& [dir, stand_in] : folders_) {
    // "DIR/x" becomes "STAND_IN/x" ("x" for an empty one), "DIR" itself STAND_IN or ".".
    const std::string bare = stand_in.empty() ? "." : stand_in;
    for (size_t at = text.find(dir); at != std::string::npos; at = text.find(dir, at)) {
      const size_t end = at + dir.size();
      // Only the whole folder: not /home/ada in /home/adam, nor in /x/home/ada.
      if ((at > 0 && (name_char(text[at - 1]) || text[at - 1] == '/')) || (end < text.size() && name_char(text[end]))) {
        at = end;
        continue;
      }
      if (end < text.size() && text[end] == '/') {
        const std::string with = stand_in.empty() ? "" : stand_in + "/";
        text.replace(at, dir.size() + 1, with);
        at += with.size();
      } else {
        text.replace(at, dir.size(), bare);
        at += bare.size();
      }
    }
  }
  return text;
}

results::EvalResult HostPaths::relative(results::EvalResult r) const {
  r.message = relative(r.message);
  r.compile_log = relative(r.compile_log);
  r.phase = relative(r.phase);
  auto scrub = [&](std::vector<results::SizeResult>& sizes) {
    for (auto& s : sizes) {
      s.failure = relative(s.failure);
      s.not_credible = relative(s.not_credible);
    }
  };
  scrub(r.sizes);
  for (auto& c : r.structure_checks) scrub(c.sizes);
  return r;
}

}  // namespace mgk::agent
