// The candidate's process, started by the launcher exactly as for a real evaluation (the
// same sandbox, environment policy and socket), with an API key planted in mgk's own
// environment: it cannot read the key (neither from its environment nor from any process's
// /proc entry), cannot write outside its scratch directory, cannot reach the network, and
// sees nothing of the host's files but the system's libraries and the paths to its own.
// Run once per isolation this machine has (bubblewrap, the kernel's namespaces).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "eval/launcher.h"
#include "support/fakes.h"
#include "support/loopback_listener.h"
#include "support/test_paths.h"

namespace mgk::eval {
namespace {

namespace fs = std::filesystem;

using test::LoopbackListener;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> split(const std::string& words) {
  std::istringstream in(words);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string first_component(const fs::path& p) { return (++fs::absolute(p).begin())->string(); }

// What the probe printed for `what`, once it has printed everything.
std::string line_of(const std::string& log, const std::string& what) {
  auto at = log.find(what + ": ");
  if (at == std::string::npos) return "(missing)";
  auto end = log.find('\n', at);
  return log.substr(at + what.size() + 2, end - at - what.size() - 2);
}

class CandidateSandbox : public ::testing::TestWithParam<sandboxing::IsolationKind> {
 protected:
  void SetUp() override {
    how_ = sandboxing::probe_isolation("/usr/bin:/bin");
    if (GetParam() == sandboxing::IsolationKind::kNamespaces) {
      // The fallback for machines without bubblewrap (the GPU machines): tried directly.
      sandboxing::IsolationStatus ns{sandboxing::IsolationKind::kNamespaces, "", ""};
      how_ = ns;
    } else if (how_.kind != sandboxing::IsolationKind::kBubblewrap) {
      GTEST_SKIP() << "bubblewrap is not usable here: " << how_.problem;
    }
    ::setenv("OPENAI_API_KEY", "sk-planted-0123456789", 1);
  }
  void TearDown() override { ::unsetenv("OPENAI_API_KEY"); }
  sandboxing::IsolationStatus how_;
};

TEST_P(CandidateSandbox, CannotReadTheKeyWriteOutsideOrReachTheNetwork) {
  LoopbackListener listener;
  test::TempDir bin("mgk-probe-bin"), work("mgk-probe-work");
  std::ofstream(work.path() / "planted.txt") << "the evaluation's own files";
  GroupSpec spec;
  spec.harness = test::fake("scripted-harness", bin.path(), "scripted-harness-correct");
  spec.candidate = test::fake("sandbox-probe", bin.path(), "sandbox-probe-" + std::to_string(listener.port()));
  spec.gpus = {0};
  spec.work_dir = work.path();
  spec.isolation = how_;
  std::string log;
  {
    RankGroup group(spec);
    ASSERT_EQ(group.candidate_isolation(), GetParam());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      log = read_text(work.path() / "rank0.candidate.log");
      if (log.find("connect to 1.1.1.1:443: ") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ASSERT_NE(log.find("connect to 1.1.1.1:443: "), std::string::npos) << "the probe did not finish: " << log;
  EXPECT_EQ(line_of(log, "OPENAI_API_KEY"), "(unset)") << log;
  EXPECT_EQ(line_of(log, "planted key in some /proc/*/environ"), "not found") << log;
  // In its own PID namespace the launcher is invisible: its parent is the namespace's init
  // (bubblewrap's) or outside the namespace (pid 0).
  EXPECT_LE(std::stoi(line_of(log, "parent pid")), 1) << log;
  // PID 1 is bubblewrap's own process (started with the scrubbed environment: nothing to
  // find) or mgk's init, a copy of mgk's memory, which must be out of reach.
  if (GetParam() == sandboxing::IsolationKind::kNamespaces) {
    EXPECT_EQ(line_of(log, "read /proc/1/environ"), "denied") << log;
    EXPECT_EQ(line_of(log, "read /proc/1/mem"), "denied") << log;
  } else {
    EXPECT_NE(line_of(log, "read /proc/1/environ"), "READ, KEY FOUND") << log;
  }
  EXPECT_EQ(line_of(log, "working directory"), (work.path() / "candidate0").string());
  EXPECT_EQ(line_of(log, "write in its directory"), "WRITTEN") << log;
  // Next to its program and beside its directory lie either read-only mounts or (under /tmp)
  // its private tmpfs: either way nothing reaches the real directories, checked below.
  EXPECT_FALSE(fs::exists(bin.path() / "outside.txt"));
  EXPECT_FALSE(fs::exists(work.path() / "outside.txt"));
  // Nothing of the host but the system's libraries and programs, its GPUs' device nodes and
  // the paths to its own files: not the project, not the evaluation's other files, not /etc.
  for (const std::string& entry : split(line_of(log, "root entries")))
    EXPECT_TRUE(std::set<std::string>({"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "sys",
                                       "tmp", "usr", first_component(work.path()), first_component(test::build_dir())})
                    .count(entry))
        << "the candidate sees '/" << entry << "' of the host: " << log;
  EXPECT_EQ(line_of(log, "read the file planted beside its directory"), "unreadable") << log;
  EXPECT_EQ(line_of(log, "read the project's tree"), "unreadable") << log;
  EXPECT_EQ(line_of(log, "read /etc/passwd"), "unreadable") << log;
  EXPECT_EQ(line_of(log, "read NCCL's library"), "unreadable") << log;
  EXPECT_EQ(line_of(log, "connect to the parent's loopback").rfind("failed", 0), 0u) << log;
  EXPECT_EQ(line_of(log, "connect to 1.1.1.1:443").rfind("failed", 0), 0u) << log;
  EXPECT_FALSE(listener.someone_connected());
  EXPECT_EQ(read_text(work.path() / "rank0.log").find("sk-planted"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Isolation, CandidateSandbox,
                         ::testing::Values(sandboxing::IsolationKind::kBubblewrap, sandboxing::IsolationKind::kNamespaces),
                         [](const auto& info) { return std::string(sandboxing::to_string(info.param)); });

}  // namespace
}  // namespace mgk::eval
