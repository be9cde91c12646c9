// CLI11's own parse errors in mgk's one-line style: what is wrong, then what to do
// ("--resume takes one value, not 2; 'mgk bench --help' lists the options").
#pragma once
#include <string>

namespace mgk::cli {

// `message`: the CLI11 error's text; `command`: the subcommand it was parsing ("" before
// one). Texts mgk's own validators wrote ("--max-tokens: must be ...") pass through.
std::string reword_parse_error(const std::string& message, const std::string& command);

}  // namespace mgk::cli
