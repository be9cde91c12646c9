// Machines without a usable bubblewrap: the probe says why, the runner falls back with a
// warning (never silently), and a run that requires isolation refuses to start.
#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>

#include "common/error.h"
#include "sandboxing/isolation.h"
#include "sandboxing/runner.h"
#include "support/test_paths.h"

namespace mgk::sandboxing {
namespace {

TEST(BubblewrapProbe, SaysWhenBwrapIsNotInstalled) {
  test::TempDir empty("mgk-nobwrap");
  BubblewrapStatus s = probe_bubblewrap(empty.path().string());
  EXPECT_FALSE(s.usable);
  EXPECT_EQ(s.problem, "bubblewrap (bwrap) is not installed");
}

TEST(BubblewrapProbe, SaysWhenBwrapCannotCreateNamespaces) {
  test::TempDir bin("mgk-fakebwrap");
  const auto fake = bin.path() / "bwrap";
  std::ofstream(fake) << "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n";
  ::chmod(fake.c_str(), 0755);
  BubblewrapStatus s = probe_bubblewrap(bin.path().string());
  EXPECT_FALSE(s.usable);
  EXPECT_EQ(s.program, fake.string());
  EXPECT_EQ(s.problem, "bwrap cannot create a sandbox here (bwrap: No permissions to creating new namespace)");
}

TEST(BubblewrapProbe, TheWarningSaysWhatIsLostAndWhatToDo) {
  std::string w = unisolated_warning("bubblewrap (bwrap) is not installed");
  EXPECT_NE(w.find("WITHOUT isolation"), std::string::npos);
  EXPECT_NE(w.find("install bubblewrap"), std::string::npos);
  EXPECT_NE(w.find("user namespaces"), std::string::npos);
}

// Without bubblewrap the kernel's namespaces are the next choice: what the GPU machines
// (no bubblewrap there) use.
TEST(IsolationProbe, FallsBackToNamespacesWithoutBubblewrap) {
  test::TempDir empty("mgk-nobwrap");
  IsolationStatus s = probe_isolation(empty.path().string());
  if (s.kind == IsolationKind::kNone) {
    EXPECT_NE(s.problem.find("namespaces cannot be entered"), std::string::npos) << s.problem;
    GTEST_SKIP() << "this machine allows no namespaces: " << s.problem;
  }
  EXPECT_EQ(s.kind, IsolationKind::kNamespaces);
  EXPECT_EQ(s.problem, "bubblewrap (bwrap) is not installed");
}

TEST(Fallback, AutoRunsUnisolatedAndRequireRefuses) {
  test::TempDir dir("mgk-fallback");
  RunnerOptions o;
  o.sandbox_dir = dir.path();
  o.isolation_status = IsolationStatus{IsolationKind::kNone, "", "bubblewrap (bwrap) is not installed"};
  o.isolation = IsolationMode::kAuto;
  Runner unisolated(o);
  EXPECT_FALSE(unisolated.isolated());
  EXPECT_EQ(unisolated.run_shell("echo still-runs").output, "still-runs\n");
  o.isolation = IsolationMode::kRequire;
  try {
    Runner refused(o);
    FAIL() << "a required isolation was silently dropped";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bubblewrap (bwrap) is not installed; isolation was required: install "
                                         "bubblewrap, or allow user namespaces"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace mgk::sandboxing
