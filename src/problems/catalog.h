// The suite on disk: every problems/<category>/<name>/problem.json under the mgk root.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "common/name_patterns.h"
#include "problems/spec.h"

namespace mgk::problems {

std::filesystem::path problems_dir();  // root_dir()/problems

// All problem names ("category/name"), sorted.
std::vector<std::string> list_names();

// Loads one problem. Unknown name: UsageError with the closest names as suggestions.
Spec load(const std::string& name);

// Names matching a glob ('tp/*', '*reduce*', 'collectives/all_reduce'); '*' and '?' only
// (common/name_patterns.h: the whole name, or the name without its category).
std::vector<std::string> match(const std::string& pattern);
using mgk::glob_match;

}  // namespace mgk::problems
