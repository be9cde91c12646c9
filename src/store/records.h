// The rows of the store as C++ values: what callers write (the *Start / *End structs and
// TurnRecord / EvaluationRecord) and what queries read back. Times are store timestamps
// (store/timestamp.h); JSON fields are nlohmann::json.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "results/eval_result.h"

namespace mgk::store {

// The life of a run or an attempt. "running" rows left by a process that died are what
// a resume picks up (Store::attempts_to_resume).
enum class Status { kRunning, kDone, kInterrupted, kFailed };
const char* to_string(Status s);
// Throws mgk::UsageError listing the valid names.
Status status_from_string(const std::string& s);

// Valid run kinds: "generate", "bench", "tune", "eval". UsageError listing them otherwise.
void check_run_kind(const std::string& kind);

struct RunStart {
  std::string kind;
  std::string model;                               // provider:model, empty for runs without a model
  nlohmann::json args = nlohmann::json::object();  // the options the run was started with
};

struct RunRecord {
  int64_t id = 0;
  std::string uuid;  // stays the same when shards are merged
  std::string kind, model;
  nlohmann::json args;
  Status status = Status::kRunning;
  std::string host;
  std::optional<int64_t> pid;
  std::string created_at;
  std::optional<std::string> ended_at;
  nlohmann::json summary;  // set by finish_run (a bench report's pass@k, ...)
  int64_t tokens_in = 0, tokens_out = 0, tokens_cached = 0, tokens_reasoning = 0;
  std::optional<double> cost_usd = 0.0;  // sums over the run's turns (record_turn); none: unknown
  std::optional<double> best_speedup;  // max over the run's correct evaluations of speedup_min

  // A bench run's --name, kept in its args; "" for none.
  std::string name() const { return args.is_object() ? args.value("name", "") : ""; }
};

struct AttemptStart {
  int64_t run_id = 0;
  std::string problem;         // e.g. "collectives/all_reduce"
  std::string model;           // provider:model
  std::string mode;            // "refine" or "shell"
  std::string prompt_version;  // prompts/VERSION
  int sample = 0;              // which of a bench's samples per problem (pass@k)
  int world_size = 0;
  nlohmann::json config = nlohmann::json::object();  // turns, limits, temperature, ...
};

struct AttemptEnd {
  Status status = Status::kDone;
  std::string exit_reason;                      // the agent's exit reason, e.g. "submitted"
  std::optional<std::string> best_kernel_hash;  // from put_kernel; none when nothing passed
};

// An attempt with its totals, as history and show list it.
struct AttemptSummary {
  int64_t id = 0, run_id = 0;
  std::string run_kind;  // the kind of its run: generate or bench
  std::string problem, model, mode, prompt_version;
  int sample = 0, world_size = 0;
  nlohmann::json config;
  Status status = Status::kRunning;
  std::string exit_reason;
  // The stored best kernel, else (an unfinished attempt) the kernel of the correct
  // evaluation with the highest speedup_min.
  std::optional<std::string> best_kernel_hash;
  std::optional<double> best_speedup;  // max over correct evaluations of speedup_min
  std::string started_at;
  std::optional<std::string> ended_at;
  int turns = 0;
  int64_t tokens_in = 0, tokens_out = 0, tokens_cached = 0, tokens_reasoning = 0;
  std::optional<double> cost_usd = 0.0;  // none: unknown (a turn of it had no price)
};

// One model call of an attempt and what the tool made of the reply.
struct TurnRecord {
  int64_t attempt_id = 0;
  int index = 0;  // 0, 1, 2, ... unique within the attempt
  // The messages of this turn's request as a JSON array of {"role", "content"}: either only
  // those no earlier turn stored (the agent's way; a resume rebuilds the conversation from
  // them plus the replies and feedback) or the whole request. `mgk show` handles both.
  nlohmann::json messages = nlohmann::json::array();
  std::string reply;  // the model's reply text
  int64_t tokens_in = 0, tokens_out = 0, tokens_cached = 0, tokens_reasoning = 0;
  std::optional<double> cost_usd = 0.0;  // none: unknown (the model has no price)
  double latency_s = 0;
  std::string finish_reason;               // as the provider reported it: stop, length, ...
  std::string action;                      // what the reply was taken as: kernel, shell, ...,
                                           // or kTurnPending until the agent acted on it
  std::optional<std::string> kernel_hash;  // the kernel the reply proposed, from put_kernel
  std::string feedback;                    // the tool's answer (next user message), if any
  std::string created_at;                  // set by the store
};

// The action of a turn whose reply is stored (paid for) but not yet acted on: its kernel
// being judged, its command run. A resume acts on it without asking the model again.
inline constexpr const char* kTurnPending = "pending";

// One evaluation of a kernel. Build it from an EvalResult's JSON with from_result().
struct EvaluationRecord {
  int64_t id = 0;                     // set by the store
  std::optional<int64_t> run_id;      // defaults to the attempt's run
  std::optional<int64_t> attempt_id;  // none for `mgk eval` by hand
  std::optional<int> turn_index;
  std::string kernel_hash;  // from put_kernel (of the source)
  std::string problem;
  int world_size = 0;
  std::vector<int> gpus;
  std::string verdict;  // results::to_string(Verdict)
  std::string message;
  // Columns for the queries: results::EvalResult::speedup() (the slowest size's) and the
  // median and largest of speedups(); none unless the kernel has a speedup.
  std::optional<double> speedup_min, speedup_median, speedup_max;
  results::EvalResult result;  // whole; stored as its to_json()
  std::string created_at;      // set by the store

  // The record of `result`, its columns filled from it; the result's kernel_hash is made the
  // record's (the source's hash, Store::put_kernel).
  static EvaluationRecord from_result(results::EvalResult result, std::string kernel_hash);
  // The same from results::EvalResult::to_json(); mgk::Error when it is not an object.
  static EvaluationRecord from_result(const nlohmann::json& result, std::string kernel_hash);
};

// Everything `mgk show` prints about one attempt.
struct AttemptDetail {
  AttemptSummary attempt;
  std::vector<TurnRecord> turns;
  std::vector<EvaluationRecord> evaluations;  // oldest first
  std::optional<std::string> best_kernel_source;
};

// Filters of `mgk history`; unset fields do not filter.
struct HistoryFilter {
  std::optional<std::string> problem;  // names and globs, comma-separated (common/name_patterns.h)
  std::optional<std::string> model;    // a glob: "anthropic:*"
  std::optional<Status> status;
  std::optional<std::string> since, until;  // store timestamps, inclusive, on started_at
  std::optional<int64_t> run_id;
  std::vector<std::string> kinds;  // run kinds (generate, bench, eval, tune); empty: all
  int limit = 20;  // newest first; <= 0 means no limit
};

// The machine a calibration was measured on.
struct MachineKey {
  std::string gpu_model;
  int gpu_count = 0;
  std::string driver;
};

// Which tuning trials to list; unset fields do not filter.
struct TuningTrialFilter {
  std::optional<std::string> kernel_hash, problem, size, gpu_model, driver, status;
  std::optional<int> world_size;
  int limit = 0;  // <= 0: all
};

// What Store::merge_from copied.
struct MergeReport {
  int runs = 0;  // runs added
  int runs_already_present = 0;
  int runs_updated = 0, attempts_updated = 0;  // already here, and ended since in the shard
  int attempts = 0, turns = 0, evaluations = 0;  // added
  int kernels_added = 0;  // kernel sources not in the target before
  int tuning_trials = 0;  // trials added or replaced by a newer measurement
  int calibrations = 0;
};

}  // namespace mgk::store
