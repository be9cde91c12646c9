#include "common/progress_line.h"

#include <unistd.h>

#include <cstdio>

namespace mgk {

ProgressLine::ProgressLine() : on_(isatty(STDERR_FILENO) != 0) {}

ProgressLine::~ProgressLine() {
  if (shown_) std::fputs("\r\033[K", stderr);
}

void ProgressLine::show(const std::string& what) {
  if (!on_) return;
  std::fprintf(stderr, "\r\033[Kmgk: %s ...", what.c_str());
  std::fflush(stderr);
  shown_ = true;
}

std::function<void(const std::string&)> ProgressLine::callback() {
  if (!on_) return {};
  return [this](const std::string& what) { show(what); };
}

}  // namespace mgk
