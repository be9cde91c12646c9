// What one attempt of a bench came to, read from its stored evaluations: the outcome class
// (the furthest its kernels got), whether its best correct kernel was timed, its speedup
// and roofline fraction, what it cost, and the design choices of the kernel it rests on.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/kernel_features.h"
#include "report/run_data.h"

namespace mgk::report {

// Ordered from the furthest a kernel got to the least; an attempt takes the best over its
// evaluations.
enum class Outcome {
  kCorrect,         // a kernel passed every check
  kCompiled,        // --compile-only: a kernel compiled (nothing ran)
  kWrong,           // ran, but an output was wrong (mismatch, NaN, modified input)
  kHang,            // killed by the watchdog
  kCrash,           // a rank failed (CUDA error, illegal address, non-zero return)
  kDidNotCompile,   // nvcc refused every kernel
  kRefused,         // refused before compiling (NCCL, dlopen, the oracle, multicast)
  kNoKernel,        // the model never produced a kernel that could be judged
  kInfrastructure,  // the provider or the evaluator failed before a correct kernel: says
                    // nothing of the model, so it enters no metric (counted apart)
  kUnfinished,      // still running or interrupted: not counted in any metric
};
const char* to_string(Outcome o);  // "correct", "did_not_compile", ...
const char* describe(Outcome o);   // "did not compile", ...
std::vector<Outcome> all_outcomes();

// True for outcomes where some kernel of the attempt compiled.
bool compiled_something(Outcome o);

struct TurnVerdict {
  int index = 0;
  std::string action;
  std::string verdict;  // the evaluation's verdict, "" when the turn judged no kernel
  std::string message;  // the evaluation's one line (may name sandbox paths)
  std::optional<double> speedup;  // correct and credible at every size: its slowest-size speedup
  bool timed = false;             // its candidate was timed (a speedup, or under the floor)
};

// One size preset of a correct, timed kernel: what the slowest-size rule hides.
struct SizeTiming {
  std::string size;
  std::optional<double> reference_us, kernel_us;  // medians
  std::optional<double> speedup;                  // absent: not credible at this size
  std::optional<double> link_gbps;                // cost model's link bytes / kernel time (busbw)
};

struct AttemptResult {
  int64_t attempt_id = 0;
  std::string problem, category;
  int sample = 0, world_size = 0;
  Outcome outcome = Outcome::kUnfinished;
  std::string exit_reason;
  // Correct attempts: the best correct kernel's slowest speedup over the sizes, and its
  // median fraction of the roofline over the sizes. Absent when it was not timed.
  bool timed = false;
  std::string not_timed_because;  // "ranks shared a GPU", "compile only", "not timed"
  // False when a size was timed under the timing floor: then there is no speedup, and the
  // sample is timed but not fast at any p.
  bool credible = true;
  std::optional<double> speedup, roofline_fraction;
  std::optional<std::string> kernel_hash;  // the kernel the outcome rests on, if any
  std::optional<KernelFeatures> features;  // of that kernel
  int turns = 0;
  int64_t tokens_in = 0, tokens_out = 0;
  std::optional<double> cost_usd = 0.0;  // none: unknown (no price)
  double wall_s = 0;  // model latency plus evaluation time, summed over turns (no queueing)
  std::vector<TurnVerdict> turn_verdicts;
  std::vector<SizeTiming> sizes;  // the best correct kernel's, when it was timed
};

AttemptResult classify(const AttemptData& attempt);

// Why a correct attempt has no speedup: "not timed", "not timed: ranks shared a GPU", "timed
// under the timing floor"; "" when it has one (or is not correct).
std::string no_speedup_because(const AttemptResult& r);

// Correct, timed, and its speedup above p: what fast_p counts.
bool faster_than(const AttemptResult& r, double p);

// The category of "tp/ag_gemm" is "tp".
std::string category_of(const std::string& problem);

}  // namespace mgk::report
