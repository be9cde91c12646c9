// scripts/suite-on-one-gpu.sh, the one-GPU device visit's driver, against a scripted `mgk`
// (a shell script in place of the binary: `problems` is the real catalog, `eval` answers
// what the test scripts and logs its arguments). What is checked: which evaluations it
// plans (worlds, presets, degenerates), how it judges the answers (an unexpected verdict is
// BAD and fails the run, a world the spec refuses is "outside the problem"), and the logs it
// keeps.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "common/file.h"
#include "support/child_process.h"
#include "support/test_paths.h"

namespace mgk::test {
namespace {

// The scripted mgk. FAKE_PASSING_DEGENERATE: a glob of the argument line whose evaluation
// answers "correct" although the script expects "incorrect" (a degenerate not rejected).
// A degenerate's answer judges each size it was given (--size A,B), incorrect but at
// FAKE_DEGENERATE_CORRECT_AT, where it passes (rejected at the other sizes only), and
// without FAKE_DEGENERATE_UNJUDGED (as if the evaluation had stopped before it).
const char* kFakeMgk = R"sh(#!/usr/bin/env bash
if [ "$1" = problems ]; then exec "$REAL_MGK" "$@"; fi
echo "$*" >> "$FAKE_CALLS"
args="$*"
# FAKE_LARGE_SECONDS: a large evaluation takes that long, and logs its end.
if [[ -n "${FAKE_LARGE_SECONDS:-}" && "$args" == *"--size large "* ]]; then
  sleep "$FAKE_LARGE_SECONDS"; echo "end" >> "$FAKE_CALLS"
fi
if [[ "$args" == *--reference* && "$args" == *moe_ep_balanced* ]]; then
  echo "mgk: error: moe/moe_ep_balanced size tiny at W = 1 is outside the problem: it needs K <= E (E = 1, K = 2)" >&2
  exit 2
fi
# FAKE_OOM: a glob of the evaluations that find GPU 0 full before their candidate loads,
# FAKE_OOM_TIMES times in a row (counted per argument line), then answer as below.
if [[ -n "${FAKE_OOM:-}" && "$args" == *$FAKE_OOM* ]]; then
  tally="$FAKE_CALLS.oom.$(md5sum <<< "$args" | cut -c1-12)"
  n=$(cat "$tally" 2> /dev/null || echo 0); echo $((n + 1)) > "$tally"
  if (( n < ${FAKE_OOM_TIMES:-1} )); then
    echo '{"verdict": "infrastructure", "message": "rank 1: cannot use GPU 0 (out of memory) (before the candidate'"'"'s code was loaded: the machine or mgk failed, not the kernel)", "sizes": []}'
    exit 1
  fi
fi
if [[ -n "${FAKE_PASSING_DEGENERATE:-}" && "$args" == *$FAKE_PASSING_DEGENERATE* ]]; then
  echo '{"verdict": "correct", "compile_seconds": 2.0, "sizes": []}'
elif [[ "$args" == */mutants/* ]]; then
  # FAKE_MISSED_MUTANT: a glob of the mutants judged correct; FAKE_CRASHING_MUTANT: of those
  # that end in a runtime error; the rest are incorrect, the worst element 40 times its bound.
  if [[ -n "${FAKE_MISSED_MUTANT:-}" && "$args" == *$FAKE_MISSED_MUTANT* ]]; then
    echo '{"verdict": "correct", "sizes": [{"size": "pkb", "correct": true, "worst_error_ratio": 0.5}]}'
  elif [[ -n "${FAKE_CRASHING_MUTANT:-}" && "$args" == *$FAKE_CRASHING_MUTANT* ]]; then
    echo '{"verdict": "runtime_error", "message": "rank 0: illegal memory access", "sizes": []}'
  else
    echo '{"verdict": "incorrect", "sizes": [{"size": "pkb", "correct": false, "failure": "output mismatch", "worst_error_ratio": 40}]}'
  fi
elif [[ "$args" == *degenerate/* || "$args" == *MGK_LOCAL_ONLY* ]]; then
  sizes=$(sed -E 's/.*--size ([^ ]+).*/\1/' <<< "$args") judged=""
  for s in ${sizes//,/ }; do
    if [ "$s" = "${FAKE_DEGENERATE_UNJUDGED:-}" ]; then continue
    elif [ "$s" = "${FAKE_DEGENERATE_CORRECT_AT:-}" ]; then j="{\"size\": \"$s\", \"correct\": true}"
    else j="{\"size\": \"$s\", \"correct\": false, \"failure\": \"output mismatch\"}"; fi
    judged+="${judged:+, }$j"
  done
  echo "{\"verdict\": \"incorrect\", \"compile_seconds\": 2.0, \"sizes\": [$judged]}"
else
  echo '{"verdict": "correct", "compile_seconds": 2.0, "sizes": []}'
fi
)sh";

// The scripted nvidia-smi: GPU 0's free MiB from FAKE_FREE_MIB, one word per call, the last
// repeated ("fail": exit 1), each answer logged beside the eval calls so the order shows.
const char* kFakeNvidiaSmi = R"sh(#!/usr/bin/env bash
n=$(cat "$FAKE_CALLS.smi" 2> /dev/null || echo 0); echo $((n + 1)) > "$FAKE_CALLS.smi"
read -ra answers <<< "$FAKE_FREE_MIB"
i=$(( n < ${#answers[@]} ? n : ${#answers[@]} - 1 ))
[ "${answers[$i]}" = fail ] && { echo "NVIDIA-SMI has failed" >&2; exit 1; }
echo "nvidia-smi free ${answers[$i]}" >> "$FAKE_CALLS"
echo "${answers[$i]}"
)sh";

struct ScriptRun {
  int exit_code = -1;
  std::string output;                // what the script printed
  std::vector<std::string> calls;    // the scripted mgk's eval argument lines
  std::filesystem::path out;
};

class SuiteOnOneGpuScript : public ::testing::Test {
 protected:
  ScriptRun run(const std::map<std::string, std::string>& env) {
    const std::filesystem::path bin = dir_.path() / "bin";
    std::filesystem::create_directories(bin);
    {
      std::ofstream(bin / "mgk") << kFakeMgk;
      std::filesystem::permissions(bin / "mgk", std::filesystem::perms::owner_all);
      std::ofstream(bin / "nvidia-smi") << kFakeNvidiaSmi;
      std::filesystem::permissions(bin / "nvidia-smi", std::filesystem::perms::owner_all);
    }
    ScriptRun r;
    r.out = dir_.path() / ("out" + std::to_string(runs_++));
    const std::filesystem::path calls = dir_.path() / ("calls" + std::to_string(runs_));
    std::map<std::string, std::string> e = env;
    e["REAL_MGK"] = mgk_binary().string();
    e["FAKE_CALLS"] = calls.string();
    e["MGK_ROOT"] = source_dir().string();
    e["MGK_HARNESS"] = (bin / "mgk-harness").string();  // never started: eval is scripted
    e["PATH"] = bin.string() + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
    ChildProcess p({"/bin/bash", (source_dir() / "scripts/suite-on-one-gpu.sh").string(), r.out.string(), bin.string()},
                   e, dir_.path() / "printed");
    r.exit_code = p.wait();
    r.output = read_file(dir_.path() / "printed");
    if (std::filesystem::exists(calls)) {
      std::ifstream in(calls);
      for (std::string line; std::getline(in, line);) r.calls.push_back(line);
    }
    return r;
  }

  static int count_calls(const ScriptRun& r, const std::vector<std::string>& parts) {
    int n = 0;
    for (const auto& c : r.calls) {
      bool all = true;
      for (const auto& p : parts) all = all && c.find(p) != std::string::npos;
      n += all;
    }
    return n;
  }

  TempDir dir_{"mgk-suite-script"};
  int runs_ = 0;
};

TEST_F(SuiteOnOneGpuScript, ADegenerateThatPassesIsBadAndFailsTheRun) {
  ScriptRun r = run({{"PROBLEMS", "tp/gemm_allreduce,moe/moe_ep_balanced"},
               {"STAGES", "1 2 3"},
               {"REFERENCE_W1", "1"},
               {"KEEP_LOGS", "bad"},
               {"JOBS", "8"},
               {"FAKE_PASSING_DEGENERATE", "tp/gemm_allreduce*MGK_LOCAL_ONLY"}});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("BAD  tp/gemm_allreduce W=2 pkb gemm_allreduce -DMGK_LOCAL_ONLY=1: correct"),
            std::string::npos)
      << r.output;
  // The spec's refusal of W = 1 is no verdict either way, and says why.
  EXPECT_NE(r.output.find("skip moe/moe_ep_balanced W=1 tiny,pkb,odd reference: no result (mgk: error: "
                          "moe/moe_ep_balanced size tiny at W = 1 is outside the problem"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("ok   tp/gemm_allreduce W=2 tiny,small,pkb,medium,odd gemm_allreduce: correct in "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("(nvcc 2 s)"), std::string::npos) << r.output;
  // 2 plain + 10 degenerates (one per preset but large, less the BAD one) + 1 reference as
  // expected; every line whole (evaluations print side by side).
  EXPECT_NE(r.output.find("suite-on-one-gpu: 12 as expected, 1 not, 1 outside their problem"), std::string::npos)
      << r.output;
  // Only the unexpected evaluation's logs are kept (and the skipped one's, which says why).
  std::vector<std::string> kept;
  for (const auto& f : std::filesystem::directory_iterator(r.out / "logs")) kept.push_back(f.path().filename());
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<std::string>{"moe_moe_ep_balanced.W1.tiny,pkb,odd.reference.err",
                                             "moe_moe_ep_balanced.W1.tiny,pkb,odd.reference.json",
                                             "tp_gemm_allreduce.W2.pkb.gemm_allreduce.local.err",
                                             "tp_gemm_allreduce.W2.pkb.gemm_allreduce.local.json"}));
  EXPECT_EQ(read_file(r.out / "bad-logs.txt"), (r.out / "logs/tp_gemm_allreduce.W2.pkb.gemm_allreduce.local.json").string() + "\n");
  // The references at W = 1 come from specs that allow one rank and have no structure check
  // (NCCL, which the reference needs, will not start with more ranks than GPUs).
  const auto w1_spec = nlohmann::json::parse(read_file(r.out / "w1-root/problems/moe/moe_ep_balanced/problem.json"));
  EXPECT_EQ(w1_spec["world_size"]["min"], 1);
  EXPECT_FALSE(w1_spec.contains("structure_check"));
  EXPECT_TRUE(nlohmann::json::parse(read_file(test::source_dir() / "problems/moe/moe_ep_balanced/problem.json"))
                  .contains("structure_check"));
}

// Stage 6: each mutant as a user runs it (the problem's default presets, default trials, its
// smallest world); caught when incorrect or a runtime error, BAD when judged correct.
TEST_F(SuiteOnOneGpuScript, MutantsAreJudgedAtTheDefaultsAndOneThatPassesIsBad) {
  ScriptRun r = run({{"PROBLEMS", "tp/gemm_allreduce,moe/moe_ep_narrow"},
                     {"STAGES", "6"},
                     {"FAKE_MISSED_MUTANT", "gemm_allreduce/mean_not_sum"},
                     {"FAKE_CRASHING_MUTANT", "gemm_allreduce/b_transposed"}});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(count_calls(r, {"tp/gemm_allreduce", "/mutants/tp/gemm_allreduce/", "--gpus 0,0 ", "--size pkb,medium,large,odd "}), 4)
      << r.output;
  EXPECT_EQ(count_calls(r, {"moe/moe_ep_narrow", "/mutants/moe/moe_ep_narrow/", "--gpus 0,0,0,0 "}), 4) << r.output;
  EXPECT_EQ(count_calls(r, {"/mutants/", "--trials"}), 0) << "the default trials";
  EXPECT_EQ(count_calls(r, {"/mutants/", "--keep-going"}), 0);
  EXPECT_NE(r.output.find("BAD  tp/gemm_allreduce W=2 pkb,medium,large,odd mean_not_sum: correct in "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("(err/bound 0.5)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ok   tp/gemm_allreduce W=2 pkb,medium,large,odd b_transposed: runtime_error"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("ok   tp/gemm_allreduce W=2 pkb,medium,large,odd last_k_dropped: incorrect (output mismatch) in "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("suite-on-one-gpu: 7 as expected, 1 not"), std::string::npos) << r.output;
  ScriptRun small = run({{"PROBLEMS", "tp/gemm_allreduce"}, {"STAGES", "6"}, {"SKIP_LARGE", "1"}});
  EXPECT_EQ(small.exit_code, 0) << small.output;
  EXPECT_EQ(count_calls(small, {"/mutants/", "--size pkb,medium,odd "}), 4) << small.output;
  ScriptRun none = run({{"PROBLEMS", "tp/gemm_allreduce"}, {"STAGES", "6"}, {"MUTANTS", "0"}});
  EXPECT_EQ(count_calls(none, {"/mutants/"}), 0) << none.output;
}

TEST_F(SuiteOnOneGpuScript, PlansTheWorldsAndPresetsItIsAskedFor) {
  ScriptRun few = run({{"PROBLEMS", "tp/gemm_allreduce"}, {"STAGES", "4"}});
  EXPECT_EQ(few.exit_code, 0) << few.output;
  ASSERT_EQ(few.calls.size(), 2u) << few.output;
  EXPECT_EQ(count_calls(few, {"--gpus 0,0,0,0 ", "--size tiny,small,pkb,odd "}), 1) << few.calls[0];
  EXPECT_EQ(count_calls(few, {"--gpus 0,0,0,0,0,0,0,0 ", "--size tiny,pkb,odd "}), 1) << few.calls[1];

  // ALL_PRESETS: every preset at W = 4 and 8 too, large included; PRESETS keeps only those named.
  ScriptRun all = run({{"PROBLEMS", "tp/gemm_allreduce"}, {"STAGES", "4 5"}, {"ALL_PRESETS", "1"}, {"PRESETS", "small,large"}});
  EXPECT_EQ(all.exit_code, 0) << all.output;
  for (const char* gpus : {"--gpus 0,0 ", "--gpus 0,0,0,0 ", "--gpus 0,0,0,0,0,0,0,0 "})
    EXPECT_EQ(count_calls(all, {gpus, "gemm_allreduce.cu --gpus", "--trials 1 --back-to-back 2 --size large "}), 1) << gpus;
  EXPECT_EQ(count_calls(all, {"--trials 2 --back-to-back 4 --size small "}), 2);  // W = 4, 8 (W = 2 is stage 1's)
  EXPECT_EQ(count_calls(all, {"degenerate/", "--size large "}) + count_calls(all, {"MGK_LOCAL_ONLY", "--size large "}), 1);
  EXPECT_EQ(count_calls(all, {"--size tiny"}) + count_calls(all, {"--size pkb"}) + count_calls(all, {"medium"}), 0);

  // WORLDS that leave a problem no world plan nothing for it (moe_ep_narrow needs W >= 4; the
  // degenerates' turns used to divide by the empty list's length).
  ScriptRun narrow = run({{"PROBLEMS", "moe/moe_ep_narrow,tp/gemm_allreduce"}, {"STAGES", "1 2"}, {"WORLDS", "2"}});
  EXPECT_EQ(narrow.exit_code, 0) << narrow.output;
  EXPECT_EQ(count_calls(narrow, {"moe_ep_narrow"}), 0) << narrow.output;
  EXPECT_NE(narrow.output.find("moe/moe_ep_narrow: no world of WORLDS in 4..72"), std::string::npos) << narrow.output;
  EXPECT_EQ(count_calls(narrow, {"tp/gemm_allreduce", "--gpus 0,0 "}), 6) << narrow.output;  // plain + 5 degenerates

  // A stage with nothing to do runs nothing (it used to start one job with no arguments).
  ScriptRun none = run({{"PROBLEMS", "tp/gemm_allreduce"}, {"STAGES", "3"}});
  EXPECT_EQ(none.exit_code, 0) << none.output;
  EXPECT_TRUE(none.calls.empty());
  EXPECT_NE(none.output.find("suite-on-one-gpu: 0 as expected, 0 not, 0 outside their problem"), std::string::npos)
      << none.output;
}

// DEGENERATES=all: each degenerate at every preset (one evaluation of all but large, with
// --keep-going, and large alone), the worlds taking turns; one that comes out correct at a
// size is BAD there, though the evaluation's verdict is "incorrect".
TEST_F(SuiteOnOneGpuScript, DegeneratesEverywhereAreJudgedAtEachSize) {
  ScriptRun r = run({{"PROBLEMS", "tp/gemm_allreduce"}, {"STAGES", "2 5"}, {"DEGENERATES", "all"}, {"LARGE_SETTLE", "0"}});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(r.calls.size(), 9u) << r.output;  // 4 degenerates x (the five presets, large), the plain at large
  for (const char* d : {"zeros.cu", "constant.cu", "copy_input.cu", "MGK_LOCAL_ONLY=1"}) {
    EXPECT_EQ(count_calls(r, {d, "--keep-going", "--size tiny,small,pkb,medium,odd "}), 1) << d << "\n" << r.output;
    EXPECT_EQ(count_calls(r, {d, "--keep-going", "--size large "}), 1) << d << "\n" << r.output;
  }
  for (const char* gpus : {"--gpus 0,0 ", "--gpus 0,0,0,0 ", "--gpus 0,0,0,0,0,0,0,0 "})
    EXPECT_GE(count_calls(r, {gpus}), 2) << "the worlds take turns: " << gpus << "\n" << r.output;
  EXPECT_EQ(count_calls(r, {"gemm_allreduce.cu --gpus", "MGK_LOCAL_ONLY"}), 2);
  // The plain candidate only at large (stage 5's, W = 2): the other gemm_allreduce.cu runs are local-only.
  EXPECT_EQ(count_calls(r, {"gemm_allreduce.cu --gpus", "--size large "}) - count_calls(r, {"MGK_LOCAL_ONLY", "--size large "}), 1);
  // Each degenerate's large preset at the world after its other presets' (zeros: W = 2, then 4).
  EXPECT_EQ(count_calls(r, {"zeros.cu --gpus 0,0 ", "--size tiny,"}), 1) << r.output;
  EXPECT_EQ(count_calls(r, {"zeros.cu --gpus 0,0,0,0 ", "--size large "}), 1) << r.output;

  ScriptRun leaky = run({{"PROBLEMS", "tp/gemm_allreduce"}, {"STAGES", "2"}, {"DEGENERATES", "all"},
                         {"FAKE_DEGENERATE_CORRECT_AT", "pkb"}});
  EXPECT_EQ(leaky.exit_code, 1) << leaky.output;
  EXPECT_NE(leaky.output.find("BAD  tp/gemm_allreduce W=2 tiny,small,pkb,medium,odd zeros: partly correct (correct at pkb)"),
            std::string::npos)
      << leaky.output;
  EXPECT_NE(leaky.output.find("4 not"), std::string::npos) << leaky.output;
  ScriptRun unjudged = run({{"PROBLEMS", "tp/gemm_allreduce"}, {"STAGES", "2"}, {"DEGENERATES", "all"},
                            {"FAKE_DEGENERATE_UNJUDGED", "odd"}});
  EXPECT_EQ(unjudged.exit_code, 1) << unjudged.output;
  EXPECT_NE(unjudged.output.find("W=4 tiny,small,pkb,medium,odd constant: partly checked (no verdict at odd)"),
            std::string::npos)
      << unjudged.output;

  // PLAIN=0: the degenerates alone.
  ScriptRun alone = run({{"PROBLEMS", "tp/gemm_allreduce"}, {"STAGES", "1 2 4 5"}, {"DEGENERATES", "all"}, {"PLAIN", "0"},
                         {"LARGE_SETTLE", "0"}});
  EXPECT_EQ(alone.exit_code, 0) << alone.output;
  EXPECT_EQ(alone.calls.size(), 8u) << alone.output;
  EXPECT_EQ(count_calls(alone, {"degenerate/"}) + count_calls(alone, {"MGK_LOCAL_ONLY"}), 8) << alone.output;

  ScriptRun typo = run({{"PROBLEMS", "tp/gemm_allreduce"}, {"STAGES", "2"}, {"DEGENERATES", "every"}});
  EXPECT_EQ(typo.exit_code, 1) << typo.output;
  EXPECT_TRUE(typo.calls.empty()) << typo.output;
  EXPECT_NE(typo.output.find("DEGENERATES=every: say 'all'"), std::string::npos) << typo.output;
}

// LARGE_FREE_GIB: a large evaluation starts only once GPU 0 has that much free (the H200 ran
// out of memory with six large evaluations at once); LARGE_DEGENERATES=0 plans the plain
// candidate alone (the degenerates' large presets shown once already).
TEST_F(SuiteOnOneGpuScript, LargeEvaluationsWaitForFreeMemory) {
  ScriptRun r = run({{"PROBLEMS", "tp/gemm_allreduce"}, {"STAGES", "5"}, {"ALL_PRESETS", "1"}, {"LARGE_DEGENERATES", "0"},
                     {"LARGE_JOBS", "3"}, {"LARGE_FREE_GIB", "40"}, {"LARGE_SETTLE", "1"},
                     {"FAKE_FREE_MIB", "90000 1000 1000 1000 1000 50000"}, {"FAKE_LARGE_SECONDS", "3"}});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(count_calls(r, {"--size large "}), 3) << r.output;  // the plain candidate at W = 2, 4, 8
  EXPECT_EQ(count_calls(r, {"degenerate/"}) + count_calls(r, {"MGK_LOCAL_ONLY"}), 0) << r.output;
  // The first answer is the start's check; then no evaluation before the GPU said 50000 MiB.
  const auto first_eval = std::find_if(r.calls.begin(), r.calls.end(), [](const std::string& c) { return c.rfind("eval ", 0) == 0; });
  const auto enough = std::find(r.calls.begin(), r.calls.end(), "nvidia-smi free 50000");
  ASSERT_NE(enough, r.calls.end()) << r.output;
  EXPECT_LT(enough - r.calls.begin(), first_eval - r.calls.begin()) << "an evaluation started before the memory was free";
  EXPECT_EQ(std::count(r.calls.begin(), first_eval, "nvidia-smi free 1000"), 4);
  // A line's time is the evaluation's own, the wait for the gate said beside it: the first
  // start waited 8 s (four answers 2 s apart) for an evaluation of 3 s.
  int own = -1, queued = -1;
  const std::regex line(R"(correct in (\d+) s \(nvcc 2 s, after (\d+) s at the large-memory gate\))");
  for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), line); it != std::sregex_iterator(); ++it)
    if (std::stoi((*it)[2]) > queued) own = std::stoi((*it)[1]), queued = std::stoi((*it)[2]);
  EXPECT_GE(queued, 8) << r.output;
  EXPECT_LT(own, 8) << "the wait for the gate counted as the evaluation's time\n" << r.output;
  // The gate holds back starts, not evaluations: the second starts while the first runs.
  const auto second_eval = std::find_if(first_eval + 1, r.calls.end(), [](const std::string& c) { return c.rfind("eval ", 0) == 0; });
  const auto first_end = std::find(r.calls.begin(), r.calls.end(), "end");
  EXPECT_LT(second_eval - r.calls.begin(), first_end - r.calls.begin()) << "the large evaluations ran one after another";

  // Without the degenerates' switch their turn at large is planned, as before.
  ScriptRun with = run({{"PROBLEMS", "tp/gemm_allreduce"}, {"STAGES", "5"}, {"LARGE_FREE_GIB", "40"}, {"LARGE_SETTLE", "0"},
                        {"FAKE_FREE_MIB", "90000"}});
  EXPECT_EQ(with.exit_code, 0) << with.output;
  EXPECT_EQ(count_calls(with, {"degenerate/", "--size large "}) + count_calls(with, {"MGK_LOCAL_ONLY", "--size large "}), 1)
      << with.output;

  // A gate that cannot read the memory stops before anything runs, and says what to do.
  ScriptRun blind = run({{"PROBLEMS", "tp/gemm_allreduce"}, {"STAGES", "5"}, {"LARGE_FREE_GIB", "40"}, {"FAKE_FREE_MIB", "fail"}});
  EXPECT_EQ(blind.exit_code, 1) << blind.output;
  EXPECT_TRUE(blind.calls.empty()) << blind.output;
  EXPECT_NE(blind.output.find("LARGE_FREE_GIB=40 needs nvidia-smi"), std::string::npos) << blind.output;

  // A gate given no number says so before anything runs.
  ScriptRun typo = run({{"PROBLEMS", "tp/gemm_allreduce"}, {"STAGES", "5"}, {"LARGE_FREE_GIB", "40G"}});
  EXPECT_EQ(typo.exit_code, 1) << typo.output;
  EXPECT_TRUE(typo.calls.empty()) << typo.output;
  EXPECT_NE(typo.output.find("LARGE_FREE_GIB=40G is not a whole number"), std::string::npos) << typo.output;
}

// JOBS x WORLD ranks at once can fill GPU 0 before a candidate loads (the twenty-third
// session's visit: nine plain candidates at W = 4 and 8, eight evaluations at once beside a
// GPU test): that is the evaluations beside it, not the kernel, so the evaluation is run
// again, OOM_RETRIES times at most, and its line says so; one still out of memory after them
// is BAD (an infrastructure verdict is never the expected one).
TEST_F(SuiteOnOneGpuScript, AnEvaluationThatFindsTheGpuFullIsRunAgain) {
  ScriptRun r = run({{"PROBLEMS", "tp/gemm_allreduce"}, {"STAGES", "1"}, {"OOM_WAIT", "0"}, {"FAKE_OOM", "tp/gemm_allreduce"}});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_calls(r, {"tp/gemm_allreduce"}), 2) << r.output;
  EXPECT_NE(r.output.find("ok   tp/gemm_allreduce W=2 tiny,small,pkb,medium,odd gemm_allreduce: correct in "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("run 2 times: GPU 0 was out of memory before"), std::string::npos) << r.output;

  ScriptRun full = run({{"PROBLEMS", "tp/gemm_allreduce"},
                        {"STAGES", "1"},
                        {"OOM_WAIT", "0"},
                        {"FAKE_OOM", "tp/gemm_allreduce"},
                        {"FAKE_OOM_TIMES", "5"}});
  EXPECT_EQ(full.exit_code, 1) << full.output;
  EXPECT_EQ(count_calls(full, {"tp/gemm_allreduce"}), 3) << "the first run and OOM_RETRIES (2) more";
  EXPECT_NE(full.output.find("BAD  tp/gemm_allreduce W=2 tiny,small,pkb,medium,odd gemm_allreduce: infrastructure "
                             "(rank 1: cannot use GPU 0 (out of memory)"),
            std::string::npos)
      << full.output;
  EXPECT_NE(full.output.find("run 3 times: GPU 0 was out of memory before"), std::string::npos) << full.output;
}

}  // namespace
}  // namespace mgk::test
