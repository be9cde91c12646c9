// The prompt files under prompts/ (every text the model sees) and their version. Templates
// are named by their path under prompts/ without ".md": "system_refine",
// "feedback/mismatch". The version (prompts/VERSION) is stored with every attempt.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "agent/template.h"

namespace mgk::agent {

class PromptLibrary {
 public:
  // Reads VERSION and every *.md under `dir`. Throws mgk::Error naming what is missing.
  static PromptLibrary load(const std::filesystem::path& dir);
  // root_dir()/prompts
  static PromptLibrary load_default();

  const std::string& version() const { return version_; }
  // Renders the named template; an unknown name is an error listing the names there are.
  std::string render(const std::string& name, const TemplateVars& vars) const;
  bool has(const std::string& name) const { return templates_.count(name) != 0; }
  std::vector<std::string> names() const;

 private:
  std::filesystem::path dir_;
  std::string version_;
  std::map<std::string, std::string> templates_;
};

}  // namespace mgk::agent
