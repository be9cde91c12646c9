#include "common/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace mgk {

namespace {
std::atomic<bool> flag{false};

void on_signal(int sig) {
  static const char kMessage[] =
      "\nmgk: interrupted: finishing the current step (press Ctrl-C again to stop at once)\n";
  if (flag.exchange(true)) {
    signal(sig, SIG_DFL);  // second signal: give up gracefully handling it
    raise(sig);
    return;
  }
  ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof kMessage - 1);  // async-signal-safe
  (void)ignored;
}
}  // namespace

void install_interrupt_handler() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() { return flag.load(); }
const std::atomic<bool>& interrupt_flag() { return flag; }
void clear_interrupt() { flag = false; }

void throw_if_interrupted() {
  if (interrupted()) throw Interrupted();
}

}  // namespace mgk
