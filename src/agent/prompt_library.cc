#include "agent/prompt_library.h"

#include <fstream>
#include <sstream>

#include "common/file.h"
#include "common/env.h"
#include "common/error.h"

namespace mgk::agent {
namespace fs = std::filesystem;

PromptLibrary PromptLibrary::load(const fs::path& dir) {
  PromptLibrary lib;
  lib.dir_ = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error("the prompts directory " + dir.string() +
                " does not exist; set MGK_ROOT to the mgk installation");
  std::string version = read_file(dir / "VERSION", "prompt file");
  lib.version_ = version.substr(0, version.find_first_of("\r\n"));
  if (lib.version_.empty()) throw Error("prompt version file " + (dir / "VERSION").string() + " is empty");
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".md") continue;
    fs::path rel = entry.path().lexically_relative(dir);
    rel.replace_extension();
    lib.templates_[rel.generic_string()] = read_file(entry.path(), "prompt file");
  }
  return lib;
}

PromptLibrary PromptLibrary::load_default() { return load(root_dir() / "prompts"); }

std::vector<std::string> PromptLibrary::names() const {
  std::vector<std::string> out;
  for (const auto& [name, text] : templates_) out.push_back(name);
  return out;
}

std::string PromptLibrary::render(const std::string& name, const TemplateVars& vars) const {
  auto it = templates_.find(name);
  if (it == templates_.end()) {
    std::string known;
    for (const auto& [n, t] : templates_) known += (known.empty() ? "" : ", ") + n;
    throw Error("no prompt template '" + name + "' in " + dir_.string() + " (there are: " + known + ")");
  }
  return render_template(name + ".md", it->second, vars);
}

}  // namespace mgk::agent
