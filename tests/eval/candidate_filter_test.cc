// The candidate process's system-call filter, in the process the launcher starts exactly as
// it starts mgk-candidate (same sandbox, same socket), on each isolation path: a probe that
// installs mgk-candidate's own filter (tests/fakes/filter_probe.cc) and then forks, opens a
// socket, ptraces, maps anonymous executable memory or signals another process by a raw
// `syscall` instruction is ended, and the launcher names the call as the candidate's
// refusal; what a CUDA host program does is let through.
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "eval/candidate_rules.h"
#include "eval/launcher.h"
#include "syscall_filter.h"
#include "support/fakes.h"
#include "support/test_paths.h"

namespace mgk::eval {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Attack {
  const char* mode;
  const char* call;  // the system call the refusal must name
  const char* why;
  const char* rule;  // its class (eval/candidate_rules.h), which the model's feedback quotes
};

const Attack kAttacks[] = {
    {"fork", "fork", "candidates may not start processes", "processes"},
    {"socket", "socket", "candidates may not open sockets or network connections", "sockets"},
    {"ptrace", "ptrace", "candidates may not inspect or control other processes", "process-control"},
    {"execmem", "mmap", "candidates may not make memory executable", "memory-mapping"},
    {"killinit", "kill", "candidates may signal only their own process", "process-control"},
};

class CandidateFilter : public ::testing::TestWithParam<sandboxing::IsolationKind> {
 protected:
  void SetUp() override {
    how_ = {GetParam(), "", ""};
    if (GetParam() == sandboxing::IsolationKind::kBubblewrap) {
      how_ = sandboxing::probe_isolation("/usr/bin:/bin");
      if (how_.kind != sandboxing::IsolationKind::kBubblewrap) GTEST_SKIP() << "bubblewrap is not usable here: " << how_.problem;
    }
  }
  GroupSpec spec(const fs::path& bin, const fs::path& work, const std::string& mode) const {
    GroupSpec s;
    s.harness = test::fake("scripted-harness", bin, "scripted-harness-correct");
    s.candidate = test::fake("filter-probe", bin, "filter-probe-" + mode);
    s.gpus = {0};
    s.work_dir = work;
    s.isolation = how_;
    return s;
  }
  // The probe's log once it has printed `marker` (or what it printed within 30 s).
  std::string run_until(const std::string& mode, const std::string& marker) const {
    test::TempDir bin("mgk-filter-bin"), work("mgk-filter-work");
    RankGroup group(spec(bin.path(), work.path(), mode));
    std::string log;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      log = read_text(work.path() / "rank0.candidate.log");
      if (log.find(marker) != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return log;
  }
  sandboxing::IsolationStatus how_;
};

TEST_P(CandidateFilter, EachForbiddenRawSystemCallEndsTheCandidateAsItsOwnRefusalNamingTheCall) {
  for (const Attack& a : kAttacks) {
    SCOPED_TRACE(a.mode);
    test::TempDir bin("mgk-filter-bin"), work("mgk-filter-work");
    try {
      // The probe ends as it starts (before the group is up, at times), or the scripted
      // harness passes Init on to its candidate process, which is gone.
      RankGroup group(spec(bin.path(), work.path(), a.mode));
      group.command({wire::Init{}}, "init", 30);
      ADD_FAILURE() << "the probe survived: " << read_text(work.path() / "rank0.candidate.log");
    } catch (const RankError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("refused: the candidate's process of rank 0 made system call '" + std::string(a.call) + "'", 0),
                0u)
          << what;
      EXPECT_NE(what.find(a.why), std::string::npos) << what;
      EXPECT_EQ(e.refused_rule, a.rule) << what;
      EXPECT_EQ(what.find("(rule:"), std::string::npos) << "the rule's tag is for mgk, not the message: " << what;
      EXPECT_EQ(e.who, std::optional<wire::Who>(wire::Who::kCandidate));
      EXPECT_EQ(e.fault, RankFault::kDied);
    }
    const std::string log = read_text(work.path() / "rank0.candidate.log");
    EXPECT_NE(log.find("filter: installed"), std::string::npos) << log;
    EXPECT_EQ(log.find("returned"), std::string::npos) << "the call went through: " << log;
  }
}

// The filter's classes are classes of the one table the prompt is rendered from.
TEST(CandidateFilterRules, EveryRefusedCallClassNamesARuleThePromptHas) {
  std::set<std::string> ids;
  for (const auto& r : candidate_rules()) ids.insert(r.id);
  ASSERT_FALSE(sandbox::refused_call_classes().empty());
  for (const auto& c : sandbox::refused_call_classes()) EXPECT_TRUE(ids.count(c.rule)) << c.what << ": " << c.rule;
}

// What it writes it cannot run: on the namespaces path its directory is mounted noexec (the
// filter lets executable mappings of files through: the loader and the driver make them).
TEST_P(CandidateFilter, AFileItWroteCannotBeMappedExecutableOnTheNamespacesPath) {
  if (GetParam() != sandboxing::IsolationKind::kNamespaces) GTEST_SKIP() << "bubblewrap cannot mount noexec";
  const std::string log = run_until("scratchexec", "scratchexec: ");
  EXPECT_NE(log.find("scratchexec: refused by the mount"), std::string::npos) << log;
}

// Its own memory through /proc/self/mem (which ignores the pages' protection) and any file
// outside its scratch and /dev are out of its reach on every path, the unisolated one
// too (where the mounts alone would not stop the write beside its directory).
TEST_P(CandidateFilter, TheWriteGuardKeepsItsOwnMemoryAndTheHostsFilesUnwritable) {
  test::TempDir bin("mgk-filter-bin"), work("mgk-filter-work");
  std::string log;
  {
    RankGroup group(spec(bin.path(), work.path(), "writeguard"));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline && log.find("inside: ") == std::string::npos) {
      log = read_text(work.path() / "rank0.candidate.log");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ASSERT_NE(log.find("inside: "), std::string::npos) << "the probe did not finish: " << log;
  if (log.find("guard: not enforced: this kernel has no Landlock") != std::string::npos)
    GTEST_SKIP() << "skipped: this kernel has no Landlock: " << log;
  EXPECT_NE(log.find("guard: landlock ABI "), std::string::npos) << log;
  EXPECT_NE(log.find("proc self mem: denied (Permission denied)"), std::string::npos) << log;
  EXPECT_NE(log.find("beside: denied"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(work.path() / "beside-guard.txt"));
  EXPECT_NE(log.find("name a thread: OPENED"), std::string::npos) << "the CUDA driver would not start: " << log;
  EXPECT_NE(log.find("inside: OPENED"), std::string::npos) << log;
}

TEST_P(CandidateFilter, WhatAHostProgramDoesIsLetThrough) {
  const std::string log = run_until("allowed", "allowed: ");
  EXPECT_NE(log.find("thread: ran"), std::string::npos) << log;
  EXPECT_NE(log.find("allowed: ok"), std::string::npos) << log;
}

INSTANTIATE_TEST_SUITE_P(Isolation, CandidateFilter,
                         ::testing::Values(sandboxing::IsolationKind::kBubblewrap, sandboxing::IsolationKind::kNamespaces,
                                           sandboxing::IsolationKind::kNone),
                         [](const auto& info) { return std::string(sandboxing::to_string(info.param)); });

}  // namespace
}  // namespace mgk::eval
