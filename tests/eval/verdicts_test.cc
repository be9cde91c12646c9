// `mgk eval` end to end on any machine: the real launcher, watchdog, verdict logic, report
// and exit codes, with scripted rank processes (tests/fakes/) in place of the GPU ones and
// real nvcc compiling the reference and a plain candidate. Each scenario ends in the verdict
// and the exit code the README's table gives.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "common/file.h"
#include "process/run.h"
#include "support/background_mgk.h"
#include "support/fakes.h"
#include "support/mgk_cli.h"
#include "support/test_paths.h"

namespace mgk::test {
namespace {

class ScriptedEval : public ::testing::Test {
 protected:
  // The reference and the candidate compile once for every scenario.
  static std::filesystem::path home() { return shared_mgk_home(); }
  std::map<std::string, std::string> env(const std::string& scenario) {
    return {{"MGK_HOME", home().string()},
            {"MGK_HARNESS", fake("scripted-harness", bin_.path(), "scripted-harness-" + scenario).string()},
            {"MGK_CANDIDATE", fake("scripted-candidate", bin_.path(), "scripted-candidate").string()}};
  }
  std::vector<std::string> args(std::vector<std::string> extra = {}, const std::string& timeout = "3") {
    std::vector<std::string> a = {"eval",   "collectives/all_reduce", (tests_dir() / "gpu/candidates/all_reduce.cu").string(),
                                  "--size", "small",                  "--trials",
                                  "2",      "--iterations",           "10",
                                  "--json", "--no-store",             "--timeout",
                                  timeout};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  // args() at `sizes` (e.g. "tiny,small") in place of small.
  std::vector<std::string> args_at(const std::string& sizes, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = args(std::move(extra));
    *std::find(a.begin(), a.end(), "small") = sizes;
    return a;
  }
  CliResult eval(const std::string& scenario, std::vector<std::string> extra = {}) {
    return run_mgk(args(std::move(extra)), env(scenario), 300);
  }
  // `mgk ARGS` started in the background with `scenario`'s rank processes.
  process::Child spawn_mgk(const std::vector<std::string>& mgk_args, const std::string& scenario) {
    return test::spawn_mgk(mgk_args, env(scenario), said_path());
  }
  // What the spawned mgk printed (stdout and stderr).
  std::string said() const { return read_file(said_path()); }
  std::filesystem::path said_path() const { return bin_.path() / "mgk.out"; }
  TempDir bin_{"mgk-fakes"};
};

TEST_F(ScriptedEval, CorrectIsExitZeroWithSpeedupAndFloor) {
  CliResult r = eval("correct");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_verdict(r, "correct");
  auto j = r.json();
  ASSERT_EQ(j["sizes"].size(), 1u) << r.output;
  const auto& s = j["sizes"][0];
  EXPECT_DOUBLE_EQ(s["speedup"].get<double>(), 2.0);  // reference 10 us / candidate 5 us
  EXPECT_DOUBLE_EQ(s["floor"]["median_us"].get<double>(), 2.0);
  EXPECT_TRUE(s["credible"].get<bool>());
  EXPECT_GT(s["link_bytes"].get<double>(), 0) << "the cost model's bytes, for the report's bus bandwidth";
  EXPECT_EQ(s["trials_passed"], 2);
  EXPECT_EQ(s["timed_calls_checked"], 15) << "3 checked calls in each of the 5 candidate blocks";
  EXPECT_TRUE(j["timed"].get<bool>());
  EXPECT_NE(j.value("isolation", ""), "") << "the candidate processes' isolation is reported";
  EXPECT_EQ(j["kernel_hash"].get<std::string>().size(), 64u);
  const auto& p = j["provenance"];
  EXPECT_EQ(p.value("mgk", ""), MGK_VERSION) << p;
  EXPECT_NE(p.value("nvcc", ""), "") << "nvcc's release: " << p;
  EXPECT_EQ(p.value("arch", ""), "sm_90a") << p;
  EXPECT_TRUE(p.contains("gpu") && p.contains("cuda_driver") && p.contains("nccl")) << p;
}

// The candidate runner through a symlink into /tmp, which the sandbox replaces with an empty
// tmpfs (a build or a fake there, as with a checkout under /tmp): it still starts.
TEST_F(ScriptedEval, ACandidateRunnerSymlinkedIntoTmpStillStartsInItsSandbox) {
  TempDir real("mgk-runner-real");
  const auto runner = real.path() / "scripted-candidate";
  std::filesystem::copy_file(build_dir() / "fakes" / "scripted-candidate", runner);
  auto vars = env("correct");
  vars["MGK_CANDIDATE"] = (bin_.path() / "runner-link").string();
  std::filesystem::create_symlink(runner, vars["MGK_CANDIDATE"]);
  CliResult r = run_mgk(args(), vars, 300);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_verdict(r, "correct");
}

TEST_F(ScriptedEval, AMismatchIsExitOneNamingOutputRankAndIndex) {
  CliResult r = eval("incorrect");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_verdict(r, "incorrect", "mismatch", "output mismatch");
  auto m = r.json()["sizes"][0]["mismatch"];
  EXPECT_EQ(m["output"], "y");
  EXPECT_EQ(m["rank"], 1);
  EXPECT_EQ(m["index"], "[5]");
  EXPECT_TRUE(m["got"].is_null()) << "got NaN";
  EXPECT_EQ(r.json()["sizes"][0]["trials_passed"], 0);
}

// The "incorrect" scenario fails the candidate's first trial only: at tiny,small the first
// size fails and the second would pass. Without --keep-going the evaluation stops at tiny;
// with it, small is checked too, and the verdict is still incorrect.
TEST_F(ScriptedEval, KeepGoingChecksTheSizesAfterAFailingOne) {
  CliResult stop = run_mgk(args_at("tiny,small"), env("incorrect"), 300);
  EXPECT_EQ(stop.exit_code, 1) << stop.output;
  ASSERT_EQ(stop.json()["sizes"].size(), 1u) << "the first failing size ends the evaluation\n" << stop.output;
  EXPECT_EQ(stop.json()["message"], "incorrect at size tiny: output mismatch") << stop.output;

  CliResult all = run_mgk(args_at("tiny,small", {"--keep-going"}), env("incorrect"), 300);
  EXPECT_EQ(all.exit_code, 1) << all.output;
  const auto j = all.json();
  ASSERT_EQ(j["sizes"].size(), 2u) << all.output;
  EXPECT_EQ(j["sizes"][0]["size"], "tiny");
  EXPECT_FALSE(j["sizes"][0]["correct"].get<bool>()) << all.output;
  EXPECT_EQ(j["sizes"][1]["size"], "small");
  EXPECT_TRUE(j["sizes"][1]["correct"].get<bool>()) << all.output;
  EXPECT_EQ(j["verdict"], "incorrect") << "a size that passed after one that failed does not make it correct";
  EXPECT_EQ(j["message"], "incorrect at size tiny: output mismatch; correct at small") << all.output;
  EXPECT_TRUE(j["sizes"][1]["candidate"].is_null()) << "a size after a failing one is checked, not timed\n" << all.output;

  // Every size failing: each is named.
  CliResult every = run_mgk(args_at("tiny,small,medium", {"--keep-going"}), env("alwaysincorrect"), 300);
  EXPECT_EQ(every.exit_code, 1) << every.output;
  EXPECT_EQ(every.json()["sizes"].size(), 3u) << every.output;
  EXPECT_EQ(every.json()["message"], "incorrect at size tiny: output mismatch; incorrect too at small, medium") << every.output;
}

// A hang at a later size does not undo an earlier size's failure: still incorrect (exit 1, as
// without the flag), the hang said after it.
TEST_F(ScriptedEval, KeepGoingIntoAHangIsStillIncorrect) {
  CliResult r = run_mgk(args_at("tiny,small", {"--keep-going"}), env("incorrectthenhang"), 300);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const auto j = r.json();
  EXPECT_EQ(j["verdict"], "incorrect") << r.output;
  const std::string m = j.value("message", "");
  EXPECT_EQ(m.rfind("incorrect at size tiny: output mismatch; then: ", 0), 0u) << m;
  EXPECT_NE(m.find("small"), std::string::npos) << "the hang names where it was: " << m;
}

TEST_F(ScriptedEval, AHangIsExitTwoNamingThePhaseWithinTheTimeout) {
  const auto t0 = std::chrono::steady_clock::now();
  CliResult r = eval("hang");
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_verdict(r, "timeout");
  EXPECT_EQ(r.json()["phase"], "candidate trial 1/2 at size small");
  expect_message(r, "no answer within 3 s");
  EXPECT_LT(secs, 60) << "the watchdog took too long";
}

TEST_F(ScriptedEval, ACandidateProcessThatCrashesIsARuntimeErrorNamingTheSignal) {
  CliResult r = eval("crash");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_verdict(r, "runtime_error");
  expect_message(r, "the candidate process of rank ");  // every rank's crashes; whichever is seen first
  expect_message(r, " ended (killed by signal 6 (Aborted)) during candidate trial 1/2 at size small");
}

TEST_F(ScriptedEval, AReferenceThatFailsItsOwnCheckIsInfrastructure) {
  CliResult r = eval("reffails");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  expect_verdict(r, "infrastructure");
  expect_message(r, "the reference failed its own check");
}

TEST_F(ScriptedEval, AHarnessFaultIsInfrastructure) {
  CliResult r = eval("harnessfault");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  expect_verdict(r, "infrastructure");
  expect_message(r, "scripted harness fault");
}

TEST_F(ScriptedEval, AHarnessThatDiesMidRunIsInfrastructureWithItsLastWords) {
  CliResult r = eval("diesmidrun");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  expect_verdict(r, "infrastructure");
  expect_message(r, " ended (exit 9)");  // every rank's harness leaves; whichever is seen first
  expect_message(r, "leaving in the middle of a trial");
}

TEST_F(ScriptedEval, ARankThatDiesBeforeConnectingIsNoticedAtOnce) {
  const auto t0 = std::chrono::steady_clock::now();
  CliResult r = eval("diesbeforeconnect");
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 3) << r.output;
  expect_verdict(r, "infrastructure");
  expect_message(r, "ended (exit 7) during start");
  EXPECT_LT(secs, 30) << "waited out the accept instead of noticing the exit";
}

// The candidate process fails its CUDA context before the candidate's library is loaded (as
// on a GPU crowded with other evaluations): the real harness reports that as the candidate
// process's failure, and it was scored as the kernel's runtime_error.
TEST_F(ScriptedEval, ARankThatCannotMakeItsContextBeforeTheKernelLoadsIsInfrastructure) {
  CliResult r = eval("initfails");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  expect_verdict(r, "infrastructure");
  expect_message(r, "rank 1: cannot use GPU 0 (out of memory)");
  expect_message(r, "before the candidate's code was loaded");
  EXPECT_EQ(r.json()["phase"], "init (CUDA context, NCCL communicator)") << r.output;
}

// Before this was handled, the first escaped as a bare protocol error ("internal error") and
// the second held mgk forever.
TEST_F(ScriptedEval, ARankThatDiesWhenAskedWhichRankItIsIsNamedWithItsLastWords) {
  CliResult r = eval("diesathello");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  expect_verdict(r, "infrastructure");
  expect_message(r, "ended (exit 8) during start");
  expect_message(r, "leaving instead of saying which rank I am");
}

TEST_F(ScriptedEval, ARankThatNeverSaysWhichRankItIsEndsAtTheStartDeadline) {
  const auto t0 = std::chrono::steady_clock::now();
  CliResult r = eval("silentathello");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  expect_verdict(r, "infrastructure");
  expect_message(r, "did not say which rank it is within 60 s");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(120));
  EXPECT_EQ(processes_named("scripted-harness-silentathello"), 0) << "a rank process outlived mgk";
}

TEST_F(ScriptedEval, ATimeUnderTheFloorIsNotCreditedAsASpeedup) {
  CliResult r = eval("belowfloor");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_verdict(r, "correct");
  const auto j = r.json();
  const auto& s = j["sizes"][0];
  EXPECT_FALSE(s["credible"].get<bool>());
  EXPECT_DOUBLE_EQ(s["speedup"].get<double>(), 0.0);
  EXPECT_TRUE(s["roofline_fraction"].is_null());
  expect_message(r, "NOT CREDIBLE, so no speedup is reported (at small: the measured time (1.00 us) is below the "
                    "timing floor (an empty kernel, 2.00 us))");
  EXPECT_NE(s["not_credible"].get<std::string>().find("below the timing floor"), std::string::npos);
}

// Ctrl-C while the candidate hangs in its first trial. The test waits for the hang itself
// (the scripted harness says so in its rank log), not a fixed time: on a loaded machine a
// fixed sleep lands in the compile or the rank start instead.
TEST_F(ScriptedEval, CtrlCIsExit130AndLeavesNoRankBehind) {
  TempDir work("mgk-ctrlc-work");
  process::Child c = spawn_mgk(args({"--work-dir", work.path().string()}, "60"), "hang");
  const auto log = work.path() / "rank0.log";
  ASSERT_TRUE(wait_until(c, [&] {
    return std::filesystem::exists(log) && read_file(log).find("hanging in the candidate's first trial") != std::string::npos;
  })) << "the evaluation ended or never reached the hang";
  ::kill(c.pid(), SIGINT);
  const int status = c.wait();
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 130) << said();
  EXPECT_EQ(processes_named("scripted-harness-hang"), 0) << "a rank process outlived mgk";
}

// Ctrl-C while mgk asks the harness which GPUs there are (the first thing `mgk eval` does):
// exit 130, not "no GPU visible" read off the cancelled probe, and the probe is not left running.
TEST_F(ScriptedEval, CtrlCDuringTheGpuProbeIsExit130AndLeavesNoProbeBehind) {
  process::Child c = spawn_mgk(args(), "slowprobe");
  ASSERT_TRUE(wait_until(c, [&] { return processes_named("scripted-harness-slowprobe probe") > 0; }))
      << "mgk ended before it probed";
  ::kill(c.pid(), SIGINT);
  const int status = c.wait();
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << ": no handler while probing";
  EXPECT_EQ(WEXITSTATUS(status), 130) << said();
  EXPECT_EQ(processes_named("scripted-harness-slowprobe"), 0) << "the probe outlived mgk";
}

// Ctrl-C in the middle of nvcc: exit 130, no compiler process left running, no half-built
// library or temporary directory left in the cache.
TEST_F(ScriptedEval, CtrlCDuringACompileLeavesNothingBehind) {
  TempDir home("mgk-ctrlc-home");  // an empty cache: everything is compiled
  process::SpawnSpec s;
  s.argv = {mgk_binary().string(), "eval",         "collectives/all_reduce", (tests_dir() / "gpu/candidates/all_reduce.cu").string(),
            "--compile-only",      "--no-store"};
  s.env = process::current_environment();
  s.env["MGK_HOME"] = home.path().string();
  s.capture_output = true;
  process::Child c = process::spawn(s);
  // Ctrl-C once nvcc (or a compiler stage it runs) is at work on this cache.
  auto compiling = [&] {
    auto r = process::run_tool({"sh", "-c", "ps -eo args | grep -E '^[^ ]*(nvcc|cicc|cudafe|ptxas|gcc|cc1plus)' | grep -c " +
                                                home.path().string() + " || true"},
                               std::chrono::seconds(10));
    return r.output != "0\n";
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!compiling() && !c.ended() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_FALSE(c.ended()) << "the compile finished before it could be interrupted";
  ::kill(c.pid(), SIGINT);
  const int status = c.wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  auto left = process::run_tool({"sh", "-c", "ps -eo args | grep -E '^[^ ]*(nvcc|cicc|ptxas|cudafe)' | grep -c " +
                                                 home.path().string() + " || true"},
                                std::chrono::seconds(10));
  EXPECT_EQ(left.output, "0\n") << "compiler processes outlived mgk";
  for (const auto& e : std::filesystem::recursive_directory_iterator(home.path() / "cache")) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << e.path();
    EXPECT_NE(name.rfind("build-", 0), 0u) << e.path();
  }
}

TEST_F(ScriptedEval, CompileOnlyNeedsNoHarnessAndIsExitZero) {
  auto e = env("correct");
  e["MGK_HARNESS"] = "/nonexistent/mgk-harness";
  CliResult r = run_mgk({"eval", "collectives/all_reduce", (tests_dir() / "gpu/candidates/all_reduce.cu").string(),
                         "--compile-only", "--json", "--no-store"},
                        e);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_verdict(r, "compiled");
  EXPECT_FALSE(r.json()["timed"].get<bool>());
}

TEST_F(ScriptedEval, ARefusedKernelIsExitOneBeforeAnyRankStarts) {
  CliResult r = run_mgk({"eval", "collectives/all_reduce", (tests_dir() / "bad_candidates/pasted_nccl.cu").string(),
                         "--json", "--no-store"},
                        env("diesbeforeconnect"));  // a rank would fail at once: none may start
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_verdict(r, "compile_error");
  expect_message(r, "pasted_nccl.cu:12: 'ncclAllReduce': candidates may not call NCCL");
}

TEST_F(ScriptedEval, BadUsageIsExit64) {
  EXPECT_EQ(eval("correct", {"--size", "enormous"}).exit_code, 64);
  EXPECT_EQ(run_mgk({"eval", "collectives/no_such_problem", "--reference"}, env("correct")).exit_code, 64);
  CliResult dir = run_mgk({"eval", "collectives/all_reduce", tests_dir().string()}, env("correct"));
  EXPECT_EQ(dir.exit_code, 64) << dir.output;
  EXPECT_NE(dir.output.find("is a directory, not a kernel file"), std::string::npos) << dir.output;
}

// What it is doing, on a terminal only: a pseudo-terminal (util-linux `script`) sees the
// progress line; a pipe sees none of it.
TEST_F(ScriptedEval, ProgressGoesToATerminalAndNowhereElse) {
  std::string cmd = mgk_binary().string();
  for (auto& a : args()) {
    if (a == "--json") continue;
    cmd += " '" + a + "'";
  }
  std::string env_prefix;
  for (auto& [k, v] : env("correct")) env_prefix += k + "='" + v + "' ";
  auto tty = process::run_tool({"script", "-qec", env_prefix + cmd, "/dev/null"}, std::chrono::seconds(300));
  EXPECT_EQ(tty.exit_code, 0) << tty.output;
  EXPECT_NE(tty.output.find("mgk: compiling the reference"), std::string::npos) << tty.output;
  EXPECT_NE(tty.output.find("mgk: size small: trial 1/2"), std::string::npos) << tty.output;
  EXPECT_NE(tty.output.find("mgk: size small: candidate timing, block 5/5"), std::string::npos) << tty.output;
  CliResult piped = run_mgk(args(), env("correct"));
  EXPECT_EQ(piped.output.find("compiling the reference"), std::string::npos) << piped.output;
}

TEST_F(ScriptedEval, NoGpuIsSaidInOneLineWithTheWayOut) {
  CliResult r = run_mgk(args(), env("nogpu"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("no GPU visible (scripted: no GPU here); use --compile-only"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace mgk::test
