// What one evaluation of a kernel found: the verdict, and per size preset the check and the
// timings. Serialised to JSON for `mgk eval --json`, the store and the agent's feedback.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mgk::eval {

enum class Verdict {
  kCorrect,        // compiled, every trial of every size matched, timed
  kIncorrect,      // ran, but an output mismatched, an input was modified, NaN, ...
  kCompileError,   // nvcc failed
  kRuntimeError,   // a rank failed once the kernel was loaded (CUDA error, setup/run returned non-zero, crashed)
  kTimeout,        // the watchdog killed a hang
  kInfrastructure, // mgk, the machine or the reference failed: says nothing of the kernel
  kCompiled        // --compile-only: compiled, not run
};
const char* to_string(Verdict v);
Verdict verdict_from_string(const std::string& s);

// Statistics over timed iterations; an iteration's time is the max over ranks.
struct Timing {
  double median_us = 0;
  double p10_us = 0;
  double p90_us = 0;
  double min_us = 0;
  int iterations = 0;
  std::vector<double> per_rank_median_us;  // each rank's own median, for imbalance
};

struct SizeResult {
  std::string size;                   // preset name: small, medium, large, ...
  bool correct = false;
  int trials_passed = 0;
  std::string failure;                // one line: why it failed, empty when correct
  std::string failure_kind;           // mismatch, modified_input, incomplete; empty when correct
  std::string mismatch;               // the mismatch report (output, rank, index, got, expected)
  int timed_calls_checked = 0;        // timed calls (per rank) whose outputs were judged
  // The largest |got - expected| / allowed error over every checked call of this size, every
  // float output and rank (0 where all are compared exactly): at most 1 when correct, the
  // margin left; past 1 by how far a failing call went. The reference's where it ran.
  double worst_error_ratio = 0;
  double reference_worst_error_ratio = 0;
  std::optional<Timing> reference;    // absent when timing was skipped or failed
  std::optional<Timing> candidate;
  std::optional<Timing> floor;        // an empty kernel under the same timing protocol
  // The candidate's calls as the trusted harness timed them from outside the candidate's
  // process, less what the protocol costs: a lower bound its own times must respect
  // (sandbox/harness/outside_clock.h). Absent where the candidate ran in the harness.
  std::optional<Timing> outside;
  double speedup = 0;                 // reference median / candidate median; 0 when not credible
  // False when the candidate's median is below the timing floor (a time no kernel can
  // have) or below what the outside clock allows: the clock was fooled, and no speedup is
  // reported; not_credible says which.
  bool credible = true;
  std::string not_credible;
  std::optional<double> roofline_fraction;  // roofline time / candidate median
  double roofline_us = 0;
  std::string roofline_bound;         // "link", "hbm" or "flops": the term that binds
  // What the slowest rank sends over the interconnect per call (the problem's cost model):
  // over the candidate's time, the bus bandwidth as nccl-tests defines it for collectives.
  double link_bytes = 0;
};

// The evaluation repeated, for correctness only, at a world where the problem's structure
// exists (problems::StructureCheck): ranks share the evaluation's GPUs.
struct StructureCheckResult {
  int world = 0;
  std::vector<int> gpus;
  std::vector<SizeResult> sizes;  // checked, never timed
};

struct EvalResult {
  Verdict verdict = Verdict::kInfrastructure;
  std::string message;          // one line summary of the verdict
  std::string problem;
  int world_size = 0;
  std::vector<int> gpus;
  std::string kernel_hash;    // of the kernel source compiled: its identity in the store
  std::string build_key;        // the compile cache key (preprocessed source + flags + nvcc)
  std::string isolation;        // how the candidate processes were isolated: bubblewrap,
                                // namespaces, none; empty when none ran
  std::string write_guard;      // where they may write files, as they say (landlock ..., or
                                // "not enforced: why"); the first rank's unless one differs
  bool timed = false;           // false: correctness only (not_timed says why)
  std::string not_timed;
  std::string refused_rule;     // a refused kernel: the rule's class (eval/candidate_rules.h)
  std::string compile_log;      // nvcc output (warnings even on success)
  std::string source;           // the exact bytes compiled, for the store (not in the JSON)
  double compile_seconds = 0;
  bool compile_cached = false;
  double wall_seconds = 0;
  std::string phase;            // for timeouts and runtime errors: where it happened
  // Timed with a candidate process: what the call protocol costs around a call (the most
  // over ranks), probed before the candidate's library loaded; the outside clock subtracts it.
  double protocol_overhead_us = 0, protocol_spread_us = 0;
  nlohmann::json provenance = nlohmann::json::object();  // eval/provenance.h
  std::vector<SizeResult> sizes;
  // Run after every size above passed (none when the evaluation's world has the structure
  // already, or the problem declares none); a failure there makes the verdict incorrect.
  std::vector<StructureCheckResult> structure_checks;

  nlohmann::json to_json() const;
  static EvalResult from_json(const nlohmann::json& j);
};

}  // namespace mgk::eval
