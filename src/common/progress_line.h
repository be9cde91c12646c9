// One line of "what is happening now" on a terminal's stderr, rewritten in place and wiped
// when done; nothing at all when stderr is not a terminal, so logs and --json stay clean.
#pragma once
#include <functional>
#include <string>

namespace mgk {

class ProgressLine {
 public:
  ProgressLine();   // on only when stderr is a terminal
  ~ProgressLine();  // wipes the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void show(const std::string& what);
  // A callback for eval::EvalOptions::progress; empty when the line is off.
  std::function<void(const std::string&)> callback();

 private:
  bool on_;
  bool shown_ = false;
};

}  // namespace mgk
