// The runner isolated, by bubblewrap and by the kernel's namespaces (the fallback where
// bwrap is missing): what a sandboxed command can no longer see or touch. Each kind is
// skipped (with the reason) where it cannot be used.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "sandboxing/isolation.h"
#include "sandboxing/runner.h"
#include "support/loopback_listener.h"
#include "support/test_paths.h"

namespace mgk::sandboxing {
namespace {

namespace fs = std::filesystem;

class IsolatedRunner : public ::testing::TestWithParam<IsolationKind> {
 protected:
  void SetUp() override {
    if (GetParam() == IsolationKind::kBubblewrap) {
      BubblewrapStatus b = probe_bubblewrap("/usr/bin:/bin");
      if (!b.usable) GTEST_SKIP() << b.problem;
      how_ = {IsolationKind::kBubblewrap, b.program, ""};
    } else {
      how_ = {IsolationKind::kNamespaces, "", ""};
    }
  }
  Runner make(RunnerOptions o = {}) {
    o.sandbox_dir = dir_.path();
    o.isolation = IsolationMode::kRequire;
    o.isolation_status = how_;
    return Runner(o);
  }
  IsolationStatus how_;
  test::TempDir dir_{"mgk-sandbox"};
};

using test::LoopbackListener;

std::string connect_script(int port) {
  return "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(port) +
         " && echo CONNECTED || echo REFUSED";
}

TEST_P(IsolatedRunner, CannotReachTheNetworkOfTheParent) {
  LoopbackListener listener;
  Runner r = make();
  ASSERT_TRUE(r.isolated());
  ProcessResult res = r.run_shell(connect_script(listener.port()), 10);
  EXPECT_NE(res.output.find("REFUSED"), std::string::npos) << res.output;
  EXPECT_FALSE(listener.someone_connected());
}

TEST_P(IsolatedRunner, TheSameConnectionSucceedsUnisolated) {  // the check above can see one
  LoopbackListener listener;
  RunnerOptions o;
  o.sandbox_dir = dir_.path();
  o.isolation = IsolationMode::kOff;
  ProcessResult res = Runner(o).run_shell(connect_script(listener.port()), 10);
  EXPECT_NE(res.output.find("CONNECTED"), std::string::npos) << res.output;
  EXPECT_TRUE(listener.someone_connected());
}

TEST_P(IsolatedRunner, WritesOnlyInsideItsDirectory) {
  test::TempDir outside("mgk-outside");
  const fs::path host_tmp_file = outside.path().parent_path() / (outside.path().filename().string() + ".tmpfile");
  Runner r = make();
  ProcessResult res = r.run_shell("echo in > inside.txt && echo ok-inside; echo out > " +
                                  (outside.path() / "escaped.txt").string() +
                                  " || echo blocked; echo tmp > " + host_tmp_file.string() +
                                  " && cat " + host_tmp_file.string());
  EXPECT_NE(res.output.find("ok-inside"), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("blocked"), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("tmp"), std::string::npos) << res.output;  // a private /tmp
  EXPECT_TRUE(fs::exists(dir_.path() / "inside.txt"));
  EXPECT_FALSE(fs::exists(outside.path() / "escaped.txt"));
  EXPECT_FALSE(fs::exists(host_tmp_file));  // it wrote to its own /tmp, not the host's
}

TEST_P(IsolatedRunner, CannotFindTheApiKeyAnywhereInProc) {
  ::setenv("OPENAI_API_KEY", "sk-isolated-secret-0003", 1);
  Runner r = make();
  ProcessResult res = r.run_shell(
      "env; for f in /proc/*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null; ps -e -o pid=,comm=");
  ::unsetenv("OPENAI_API_KEY");
  EXPECT_EQ(res.output.find("isolated-secret"), std::string::npos) << res.output;
  EXPECT_EQ(res.output.find("_tests"), std::string::npos) << "the test process is visible";
}

TEST_P(IsolatedRunner, TheUsersHomeIsHidden) {
  test::TempDir fake_home("mgk-fake-home");
  std::ofstream(fake_home.path() / ".netrc") << "machine api password hunter2\n";
  const char* real_home = std::getenv("HOME");
  std::string saved = real_home ? real_home : "";
  ::setenv("HOME", fake_home.path().c_str(), 1);
  Runner r = make();
  ::setenv("HOME", saved.c_str(), 1);
  ProcessResult res = r.run_shell("cat " + (fake_home.path() / ".netrc").string() + " || echo hidden");
  EXPECT_EQ(res.output.find("hunter2"), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("hidden"), std::string::npos) << res.output;
}

TEST_P(IsolatedRunner, TheDeadlineStillKillsEverythingInside) {
  Runner r = make();
  ProcessResult res = r.run_shell("echo partial; (sleep 60 &); while :; do :; done", 1.0);
  EXPECT_TRUE(res.timed_out);
  EXPECT_LT(res.wall_seconds, 5.0);
  EXPECT_EQ(res.output, "partial\n");
}

TEST_P(IsolatedRunner, TheNvlinkMulticastSwitchesAreOffInside) {
  ::setenv("NCCL_NVLS_ENABLE", "1", 1);
  Runner r = make();
  ::unsetenv("NCCL_NVLS_ENABLE");
  ProcessResult res = r.run_shell("echo $NCCL_NVLS_ENABLE $NVSHMEM_DISABLE_NVLS");
  EXPECT_EQ(res.output, "0 1\n");
}

// Even as root, a command has no capability left: it cannot read the memory of its
// sandbox's first process (for the namespaces, a copy of mgk's, secrets included), remount
// the read-only system, or leave its namespaces.
TEST_P(IsolatedRunner, HasNoCapabilitiesAndCannotReadItsInitsMemory) {
  Runner r = make();
  ProcessResult res = r.run_shell("grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; "
                                  "head -c 16 /proc/1/mem > /dev/null 2>&1 && echo MEM-READ || echo mem-denied; "
                                  "mount -o remount,rw / 2>/dev/null && echo REMOUNTED || echo remount-denied");
  EXPECT_NE(res.output.find("CapEff:\t0000000000000000"), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("CapPrm:\t0000000000000000"), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("mem-denied"), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("remount-denied"), std::string::npos) << res.output;
}

INSTANTIATE_TEST_SUITE_P(Kinds, IsolatedRunner, ::testing::Values(IsolationKind::kBubblewrap, IsolationKind::kNamespaces),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace mgk::sandboxing
