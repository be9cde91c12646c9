// What one evaluation of a kernel found, typed: the verdict, whether a check refused it, and
// per size preset the check (its first wrong element) and the timings. eval produces it, the
// store keeps it (its JSON, with columns for what is queried), and the report, the agent,
// the tuner and bench read it back typed. What a kernel's speedup is, and when a time is not
// credible, is said here once.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wire/protocol.h"

namespace mgk::results {

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
  std::optional<wire::Mismatch> mismatch;  // the first wrong element, where one was found
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

  // The speedup this size credits: timed, credible and above 0; none otherwise.
  std::optional<double> credited_speedup() const;
};

// The evaluation repeated, for correctness only, at a world where the problem's structure
// exists (problems::StructureCheck): ranks share the evaluation's GPUs.
struct StructureCheckResult {
  int world = 0;
  std::vector<int> gpus;
  std::vector<SizeResult> sizes;  // checked, never timed
};

// "output 'y' rank 1 index [3, 17]: got 0.5, expected 1.25 (allowed error 0.02); 3 of 1024
// elements wrong" (got nan where it was NaN): how every report and the model's feedback say it.
std::string describe(const wire::Mismatch& m);

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
  // A check refused the kernel (its source, PTX or imports, or the candidate process's
  // system-call filter while it ran): the verdict says where (compile_error, runtime_error).
  bool refused = false;
  std::string refused_rule;     // the rule's class (eval/candidate_rules.h); empty when none applies
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

  // No size was timed under the timing floor or under what the outside clock allows.
  bool credible() const;
  // The kernel's speedup: its slowest size's, when the verdict is correct and every size was
  // timed credibly; none otherwise (not timed, a size untimed, a clock fooled).
  std::optional<double> speedup() const;
  // Every size's credited speedup, when speedup() has one; empty otherwise.
  std::vector<double> speedups() const;

  nlohmann::json to_json() const;
  static EvalResult from_json(const nlohmann::json& j);
};

}  // namespace mgk::results
