// Timing integrity where a candidate is timed, on the one GPU a machine may have: at one
// rank. The suite's problems start at two ranks, so a copy of all-reduce that allows one
// (`integrity/all_reduce_w1`: the real problem's reference and statement, its problem.json
// with world_size.min = 1) is assembled in a suite root of the test's own. Against it: the
// plain all-reduce (its time must be credible at every preset, and its outside-clock bound
// is printed for bench/RESULTS.md), and the hostile candidates of tests/gpu/attacks/, each a
// correct all-reduce with one attack on its own process, each refused, judged incorrect, or
// given no credible time. Needs one GPU (ctest label `gpu`).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/mgk_cli.h"
#include "support/test_paths.h"

namespace mgk::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kProblem = "integrity/all_reduce_w1";

// The suite root with the one-rank all-reduce beside nothing else; built once.
const fs::path& one_rank_root() {
  static const fs::path root = [] {
    const fs::path r = fs::temp_directory_path() / ("mgk-one-rank-suite-" + std::to_string(::getpid()));
    fs::remove_all(r);
    for (const char* d : {"src", "sandbox", "primitives", "prompts"}) {
      fs::create_directories(r);
      fs::create_directory_symlink(source_dir() / d, r / d);
    }
    const fs::path from = source_dir() / "problems/collectives/all_reduce", to = r / "problems" / kProblem;
    fs::create_directories(to);
    for (const char* f : {"reference.cu", "statement.md"}) fs::create_symlink(from / f, to / f);
    std::ifstream in(from / "problem.json");
    nlohmann::json spec = nlohmann::json::parse(in);
    spec["world_size"]["min"] = 1;
    spec["title"] = "All-reduce (sum), from one rank up: the timing-integrity tests' problem";
    std::ofstream(to / "problem.json") << spec.dump(2);
    return r;
  }();
  return root;
}

class OneRankTimed : public ::testing::Test {
 protected:
  void SetUp() override { MGK_REQUIRE_GPUS(false); }
  CliResult eval(const fs::path& kernel, const std::string& sizes, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"eval", kProblem, kernel.string(), "--world", "1", "--gpus", "0",
                                     "--json", "--no-store", "--size", sizes};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_mgk(args, {{"MGK_ROOT", one_rank_root().string()}, {"MGK_HOME", (build_dir() / "gpu-test-home").string()}});
  }
  static fs::path attack(const std::string& name) { return tests_dir() / "gpu/attacks" / (name + ".cu"); }
  // Every timed size of a correct result; fails the test when a size was not timed.
  static std::vector<nlohmann::json> timed_sizes(const CliResult& r) {
    std::vector<nlohmann::json> out;
    const auto j = r.json();
    for (const auto& s : j.value("sizes", nlohmann::json::array())) {
      EXPECT_FALSE(s["candidate"].is_null()) << "size " << s.value("size", "") << " was not timed: " << r.output;
      out.push_back(s);
    }
    return out;
  }
};

TEST_F(OneRankTimed, TheHonestKernelsTimeIsCredibleAtEveryPresetAndTheOutsideClockIsNearIt) {
  auto r = eval(tests_dir() / "gpu/candidates/all_reduce.cu", "tiny,small,medium,large,odd");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_verdict(r, "correct");
  const auto j = r.json();
  std::printf("outside clock: protocol overhead %.1f us (p10-p90 spread %.1f us)\n",
              j.value("protocol_overhead_us", 0.0), j.value("protocol_spread_us", 0.0));
  for (const auto& s : timed_sizes(r)) {
    EXPECT_TRUE(s.value("credible", false)) << s.dump();
    ASSERT_FALSE(s["outside"].is_null()) << "no outside clock at one rank: " << s.dump();
    const double reported = s["candidate"]["median_us"], outside = s["outside"]["median_us"];
    std::printf("outside clock: %-6s candidate %9.2f us, outside %9.2f us, outside/candidate %.3f, floor %.2f us\n",
                s.value("size", "").c_str(), reported, outside, outside / reported, s["floor"].value("median_us", 0.0));
  }
}

// A system call by instruction: refused before it runs where the loader's view of the
// library shows it (an executable section of its own), by the filter where it hides.
TEST_F(OneRankTimed, ASystemCallByInstructionIsRefusedBeforeOrAsItRuns) {
  auto outside = eval(attack("syscall_outside_text"), "tiny");
  EXPECT_EQ(outside.exit_code, 1) << outside.output;
  expect_message(outside, "refused:");
  expect_message(outside, "'.evil' is executable");
  auto hidden = eval(attack("syscall_inside_instruction"), "tiny");
  EXPECT_EQ(hidden.exit_code, 1) << hidden.output;
  expect_verdict(hidden, "runtime_error");
  expect_message(hidden, "refused: the candidate's process of rank 0 made system call 'fork'");
}

// Refused as it runs: the candidate process's system-call filter, whatever found the call,
// and whatever handler the candidate would put in the way.
TEST_F(OneRankTimed, LibcFoundInMemoryCannotForkOpenASocketOrSilenceTheFilter) {
  for (const auto& [name, call] : {std::pair{"libc_fork", "clone"}, std::pair{"libc_socket", "socket"},
                                   std::pair{"swallow_sigsys", "rt_sigaction"}}) {
    SCOPED_TRACE(name);
    auto r = eval(attack(name), "tiny");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    expect_verdict(r, "runtime_error");
    expect_message(r, std::string("refused: the candidate's process of rank 0 made system call '") + call + "'");
  }
}

// The time its own process reports, forged three ways. Re-recording the stub's start event
// and fixing the snapshot after late work leave a time under the floor (or outputs caught
// unfinished); a third of the true time, reported through the stub's GOT, is seen by the
// outside clock on long calls (at large, 293 us reported as 98), not on short ones (9 us as
// 3: under the clock's resolution at one rank, bench/RESULTS.md).
TEST_F(OneRankTimed, AForgedTimeIsNotCreditedWhereTheClocksCanSeeIt) {
  for (const auto& [name, sizes] : {std::pair{"rerecord_start_event", "small,large"},
                                    std::pair{"late_work_fixes_snapshot", "small,large"},
                                    std::pair{"got_elapsed_time", "large"}}) {
    SCOPED_TRACE(name);
    auto r = eval(attack(name), sizes);
    const auto j = r.json();
    const std::string verdict = j.value("verdict", "");
    std::printf("forged time: %-26s %s: %s\n", name, verdict.c_str(), j.value("message", "").c_str());
    if (verdict == "incorrect") continue;  // caught by the outputs: fine
    expect_verdict(r, "correct");
    for (const auto& s : timed_sizes(r)) {
      EXPECT_FALSE(s.value("credible", true)) << s.dump();
      EXPECT_EQ(s.value("speedup", 1.0), 0.0) << s.dump();
    }
  }
}

TEST_F(OneRankTimed, NothingOutsideItsScratchCanBeRead) {
  const fs::path planted = build_dir() / "gpu-test-home" / "planted-secret.txt";
  fs::create_directories(planted.parent_path());
  std::ofstream(planted) << "a file of the host's";
  auto r = eval(attack("reads_planted_file"), "tiny",
                {"-D", "PLANTED_A=\"" + planted.string() + "\"", "-D",
                 "PLANTED_B=\"" + (source_dir() / "README.md").string() + "\""});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_verdict(r, "correct");
}

// Its own memory through /proc/self/mem, which ignores the pages' protection: the write
// guard refuses the open, so the stub's GOT stays the stub's and the time stays honest (at
// large a third of it would not be credible; at small it would pass unseen).
TEST_F(OneRankTimed, ItCannotRewriteItsOwnMemoryThroughProc) {
  auto honest = eval(tests_dir() / "gpu/candidates/all_reduce.cu", "small,large");
  auto r = eval(attack("proc_self_mem"), "small,large");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_verdict(r, "correct");
  EXPECT_EQ(r.json().value("write_guard", "").rfind("landlock ABI ", 0), 0u) << r.output;
  const auto plain = timed_sizes(honest), attacked = timed_sizes(r);
  ASSERT_EQ(plain.size(), attacked.size());
  for (size_t i = 0; i < attacked.size(); ++i) {
    EXPECT_TRUE(attacked[i].value("credible", false)) << attacked[i].dump();
    const double t = attacked[i]["candidate"]["median_us"], t0 = plain[i]["candidate"]["median_us"];
    std::printf("/proc/self/mem: %-6s attacked %9.2f us, honest %9.2f us, ratio %.3f\n",
                attacked[i].value("size", "").c_str(), t, t0, t / t0);
    EXPECT_GT(t / t0, 0.9) << "a time shaved below the honest kernel's: " << attacked[i].dump();
  }
}

// NCCL loaded with libc's dlopen found in memory: the root masks it, so the attack's kernel
// stays the honest one (had NCCL loaded, its outputs would be zeros).
TEST_F(OneRankTimed, NcclCannotBeLoadedAtRunTime) {
  auto r = eval(attack("loads_nccl"), "tiny");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_verdict(r, "correct");
}

TEST_F(OneRankTimed, GarbageOnItsSocketIsTheCandidatesOwnFailure) {
  auto r = eval(attack("garbage_on_socket"), "tiny");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_verdict(r, "runtime_error");
  expect_message(r, "broke the protocol");
}

TEST_F(OneRankTimed, ItSeesItsOwnGpuAlone) {
  auto r = eval(attack("other_gpu"), "tiny");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_verdict(r, "correct");
}

}  // namespace
}  // namespace mgk::test
