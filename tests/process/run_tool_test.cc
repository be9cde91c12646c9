#include "process/run.h"

#include <chrono>
#include <csignal>
#include <thread>

#include <gtest/gtest.h>

#include "common/interrupt.h"

namespace mgk::process {
namespace {

// A tool that Ctrl-C cut short has no answer: its (empty) output must not be read as one,
// as 'mgk eval' once read a cancelled GPU probe as "no GPU visible" (exit 3, not 130).
TEST(RunTool, CtrlCKillsTheToolAndThrowsInterrupted) {
  install_interrupt_handler();
  std::thread ctrl_c([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::raise(SIGINT);
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(run_tool({"sleep", "30"}, std::chrono::seconds(60)), Interrupted);
  ctrl_c.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10)) << "the tool was waited out, not killed";
  clear_interrupt();
  EXPECT_EQ(run_tool({"sh", "-c", "echo back"}, std::chrono::seconds(10)).output, "back\n")
      << "after the flag is cleared tools run again";
}

}  // namespace
}  // namespace mgk::process
