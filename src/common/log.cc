#include "common/log.h"

#include <atomic>
#include <iostream>
#include <mutex>

namespace mgk::log {
namespace {
std::atomic<bool> verbose{false};
std::mutex mu;
void emit(const char* prefix, const std::string& m) {
  std::lock_guard<std::mutex> lock(mu);
  std::cerr << prefix << m << "\n";
}
}  // namespace

void error(const std::string& m) { emit("mgk: error: ", m); }
void warning(const std::string& m) { emit("mgk: warning: ", m); }
void info(const std::string& m) { emit("mgk: ", m); }
void set_verbose(bool on) { verbose = on; }
void debug(const std::string& m) {
  if (verbose) emit("mgk: debug: ", m);
}

}  // namespace mgk::log
