// Messages to stderr with a fixed prefix and level; only main ends the process.
#pragma once
#include <string>

namespace mgk::log {

void error(const std::string& message);    // "mgk: error: ..."
void warning(const std::string& message);  // "mgk: warning: ..."
void info(const std::string& message);     // "mgk: ..."
void set_verbose(bool on);
void debug(const std::string& message);    // only with --verbose

}  // namespace mgk::log
