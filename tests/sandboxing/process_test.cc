// The runner without bubblewrap: process groups, deadlines, limits, output, descriptors.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/text.h"
#include "sandboxing/runner.h"
#include "support/test_paths.h"

namespace mgk::sandboxing {
namespace {

class UnisolatedRunner : public ::testing::Test {
 protected:
  Runner make(RunnerOptions o = {}) {
    o.sandbox_dir = dir_.path();
    o.isolation = IsolationMode::kOff;
    return Runner(o);
  }
  // True when no live (non-zombie) process has this pid.
  static bool gone(pid_t pid) {
    if (::kill(pid, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');
    return close == std::string::npos || line.substr(close + 2, 1) == "Z";
  }
  std::vector<pid_t> read_pids(const std::string& file) {
    std::ifstream in(dir_.path() / file);
    std::vector<pid_t> pids;
    for (pid_t p; in >> p;) pids.push_back(p);
    return pids;
  }
  test::TempDir dir_{"mgk-runner"};
};

TEST_F(UnisolatedRunner, RunsInTheSandboxDirWithHomeThereAndReportsTheExitCode) {
  Runner r = make();
  ProcessResult res = r.run_shell("pwd; echo HOME=$HOME; echo to-stderr >&2; exit 3");
  EXPECT_EQ(res.exit_code, 3);
  EXPECT_FALSE(res.timed_out);
  std::string dir = std::filesystem::canonical(dir_.path()).string();
  EXPECT_EQ(res.output, dir + "\nHOME=" + dir + "\nto-stderr\n");
  EXPECT_EQ(res.status_line(60), "exit 3");
}

TEST_F(UnisolatedRunner, AnApiKeyInTheParentNeverReachesTheCommand) {
  ::setenv("OPENAI_API_KEY", "sk-test-very-secret-0001", 1);
  ::setenv("ANTHROPIC_API_KEY", "sk-ant-very-secret-0002", 1);
  ::setenv("NCCL_DEBUG", "WARN", 1);
  Runner r = make();
  ::unsetenv("OPENAI_API_KEY");
  ::unsetenv("ANTHROPIC_API_KEY");
  ProcessResult res = r.run_shell("env");
  ASSERT_EQ(res.exit_code, 0);
  EXPECT_EQ(res.output.find("very-secret"), std::string::npos) << res.output;
  EXPECT_EQ(res.output.find("API_KEY"), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("NCCL_DEBUG=WARN"), std::string::npos);
  EXPECT_NE(res.output.find("NCCL_NVLS_ENABLE=0"), std::string::npos);
  EXPECT_NE(res.output.find("NVSHMEM_DISABLE_NVLS=1"), std::string::npos);
}

TEST_F(UnisolatedRunner, AnEndlessLoopIsKilledAtTheDeadlineWithItsPartialOutput) {
  Runner r = make();
  ProcessResult res = r.run_shell("echo started; echo also-err >&2; while :; do :; done", 1.0);
  EXPECT_TRUE(res.timed_out);
  EXPECT_EQ(res.signal, SIGKILL);
  EXPECT_LT(res.wall_seconds, 4.0);
  EXPECT_EQ(res.output, "started\nalso-err\n");
  EXPECT_NE(res.status_line(1).find("timed out after 1 s"), std::string::npos);
}

TEST_F(UnisolatedRunner, TheTimeoutKillsTheWholeGroupNotJustTheShell) {
  Runner r = make();
  ProcessResult res = r.run_shell(
      "for i in 1 2 3; do (sleep 60; echo never) & echo $! >> pids; done; sleep 60", 1.0);
  EXPECT_TRUE(res.timed_out);
  EXPECT_EQ(res.output.find("never"), std::string::npos);
  auto pids = read_pids("pids");
  ASSERT_EQ(pids.size(), 3u);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (pid_t p : pids) EXPECT_TRUE(gone(p)) << "pid " << p << " survived";
}

TEST_F(UnisolatedRunner, WhatACommandLeftRunningDiesWhenItEnds) {
  Runner r = make();
  ProcessResult res = r.run_shell("sleep 60 & echo $! > pids; echo done");
  EXPECT_EQ(res.exit_code, 0);
  EXPECT_FALSE(res.timed_out);
  EXPECT_LT(res.wall_seconds, 5.0);
  EXPECT_EQ(res.output, "done\n");
  auto pids = read_pids("pids");
  ASSERT_EQ(pids.size(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(gone(pids[0]));
}

// A bounded fork bomb: hundreds of forks, each child lingering. RLIMIT_NPROC stops the
// forks for an ordinary user (not for root: the kernel exempts it), the deadline stops the
// rest, and nothing survives.
TEST_F(UnisolatedRunner, AForkBombIsStoppedByTheLimitsAndTheDeadline) {
  RunnerOptions o;
  o.limits.max_processes = 64;
  Runner r = make(o);
  ProcessResult res = r.run_shell(
      "for i in $(seq 1 200); do (sleep 60) & echo $! >> pids; done 2>&1; wait", 3.0);
  EXPECT_TRUE(res.timed_out || res.exit_code != 0);
  EXPECT_LT(res.wall_seconds, 10.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto pids = read_pids("pids");
  ASSERT_FALSE(pids.empty());
  for (pid_t p : pids) ASSERT_TRUE(gone(p)) << "pid " << p << " survived";
  if (::geteuid() != 0) {
    EXPECT_LT(pids.size(), 200u);
    EXPECT_NE(res.output.find("fork"), std::string::npos) << res.output;
  }
}

TEST_F(UnisolatedRunner, TheCpuTimeLimitStopsASpinningProcessBeforeTheDeadline) {
  RunnerOptions o;
  o.limits.cpu_seconds = 1;
  Runner r = make(o);
  ProcessResult res = r.run_shell("exec sh -c 'while :; do :; done'", 30);
  EXPECT_FALSE(res.timed_out);
  EXPECT_TRUE(res.signal == SIGXCPU || res.signal == SIGKILL) << res.status_line(30);
  EXPECT_LT(res.wall_seconds, 10.0);
}

TEST_F(UnisolatedRunner, TheFileSizeLimitStopsARunawayWriter) {
  RunnerOptions o;
  o.limits.file_size_bytes = 1 << 20;
  Runner r = make(o);
  ProcessResult res = r.run_shell("exec head -c 5000000 /dev/zero > big", 30);
  EXPECT_EQ(res.signal, SIGXFSZ) << res.status_line(30);
  EXPECT_LE(std::filesystem::file_size(dir_.path() / "big"), 1u << 20);
}

TEST_F(UnisolatedRunner, LongOutputIsCutInTheMiddleExactly) {
  Runner r = make();
  ProcessResult res = r.run_shell("seq 1 20000");
  std::string whole;
  for (int i = 1; i <= 20000; ++i) whole += std::to_string(i) + "\n";
  EXPECT_EQ(res.output_bytes, whole.size());
  EXPECT_EQ(res.output, cut_middle(whole));
}

TEST_F(UnisolatedRunner, CancellingKillsTheCommandPromptly) {
  std::atomic<bool> cancel{false};
  RunnerOptions o;
  o.cancel = &cancel;
  Runner r = make(o);
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  ProcessResult res = r.run_shell("echo waiting; sleep 60", 30);
  t.join();
  EXPECT_TRUE(res.cancelled);
  EXPECT_FALSE(res.timed_out);
  EXPECT_LT(res.wall_seconds, 5.0);
  EXPECT_EQ(res.output, "waiting\n");
}

TEST_F(UnisolatedRunner, TheParentsOpenDescriptorsDoNotLeakIn) {
  int fd = ::open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(fd, 3);
  Runner r = make();
  ProcessResult res = r.run_shell("test -e /proc/$$/fd/" + std::to_string(fd) +
                                  " && echo leaked || echo clean");
  ::close(fd);
  EXPECT_EQ(res.output, "clean\n");
}

TEST_F(UnisolatedRunner, StdinIsEmpty) {
  Runner r = make();
  ProcessResult res = r.run_shell("cat; echo end", 5);
  EXPECT_FALSE(res.timed_out);
  EXPECT_EQ(res.output, "end\n");
}

TEST_F(UnisolatedRunner, AMissingProgramOrDirectoryIsAnError) {
  Runner r = make();
  EXPECT_THROW(r.run({"no-such-program-mgk"}), Error);
  RunnerOptions o;
  o.sandbox_dir = dir_.path() / "missing";
  EXPECT_THROW(Runner{o}, Error);
}

TEST(SandboxDir, LivesUnderMgkHome) {
  test::TempDir home("mgk-home");
  ::setenv("MGK_HOME", home.path().c_str(), 1);
  auto dir = make_sandbox_dir("42");
  ::unsetenv("MGK_HOME");
  EXPECT_EQ(dir, home.path() / "sandboxes" / "42");
  EXPECT_TRUE(std::filesystem::is_directory(dir));
}

}  // namespace
}  // namespace mgk::sandboxing
