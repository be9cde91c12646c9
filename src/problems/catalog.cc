#include "problems/catalog.h"

#include <algorithm>

#include "common/env.h"
#include "common/error.h"
#include "common/name_patterns.h"

namespace mgk::problems {

namespace fs = std::filesystem;

fs::path problems_dir() { return root_dir() / "problems"; }

std::vector<std::string> list_names() {
  std::vector<std::string> names;
  fs::path root = problems_dir();
  if (!fs::is_directory(root))
    throw Error("no problems directory at " + root.string() + " (set MGK_ROOT to the mgk source tree)");
  for (const auto& cat : fs::directory_iterator(root)) {
    if (!cat.is_directory()) continue;
    for (const auto& p : fs::directory_iterator(cat.path()))
      if (fs::exists(p.path() / "problem.json"))
        names.push_back(cat.path().filename().string() + "/" + p.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> match(const std::string& pattern) {
  std::vector<std::string> out;
  const NamePatterns one{{pattern}};
  for (const auto& n : list_names())
    if (one.matches(n)) out.push_back(n);
  return out;
}

Spec load(const std::string& name) {
  auto names = list_names();
  std::string full = name;
  if (name.find('/') == std::string::npos) {  // a bare name is fine when it is unambiguous
    std::vector<std::string> hits;
    for (const auto& n : names)
      if (n.substr(n.find('/') + 1) == name) hits.push_back(n);
    if (hits.size() == 1) full = hits.front();
  }
  if (std::find(names.begin(), names.end(), full) == names.end()) {
    std::string close;
    for (const auto& n : names)
      if (n.find(name) != std::string::npos || name.find(n.substr(n.find('/') + 1)) != std::string::npos)
        close += (close.empty() ? "" : ", ") + n;
    throw UsageError("unknown problem '" + name + "'" +
                     (close.empty() ? "" : " (did you mean: " + close + "?)") +
                     "; 'mgk problems' lists them");
  }
  return load_spec_file(problems_dir() / full / "problem.json", full);
}

}  // namespace mgk::problems
