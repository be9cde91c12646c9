// Judging a stored bench run again: every attempt's kernels evaluated anew, with today's
// evaluator on this machine's GPUs, and no model called. KernelBench keeps generation and
// evaluation apart for the same reasons: kernels written where there was no GPU
// (--compile-only), or judged before an evaluator fix, get real verdicts without paying the
// model again.
//
// The result is a new bench run (its args say `rejudge_of`), so every report reads it like
// any run and `mgk report OLD NEW` sets the two side by side. Each of its attempts copies one
// finished attempt of the old run: the same problem, sample, model, world and turns (with
// their tokens and cost: what the kernels cost to write, though this run paid nothing), the
// same end (exit reason and status); only the evaluations are today's, one for each turn the
// old attempt had judged, in the same order. A kernel sent twice in one attempt is judged
// once. Unfinished attempts of the old run are not judged (resume that run first).
#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "results/eval_result.h"
#include "bench_run/work_list.h"
#include "store/store.h"

namespace mgk::bench_run {

// The old run's attempts that can be judged again (done or failed), by (problem, sample);
// where a key was stored twice the newer attempt counts, as in remaining_work.
std::map<AttemptKey, store::AttemptSummary> judgeable_attempts(const std::vector<store::AttemptSummary>& old_run);

class Rejudger {
 public:
  using Status = std::function<void(const std::string&)>;
  // Judges one kernel file of the problem (its options: the problem, the world; the GPUs per
  // lease), saying what it does on `status`. Throws mgk::Error when the judge cannot work.
  using Judge = std::function<results::EvalResult(const std::string& problem, const std::filesystem::path& kernel,
                                               const Status& status)>;

  // `compile_only`: the judge only compiles (today's checks, no GPU), as each copy's config says.
  Rejudger(store::Store& store, int64_t new_run, std::map<AttemptKey, store::AttemptSummary> old_attempts,
           Judge judge, bool compile_only, const std::atomic<bool>* interrupt);

  // Copies the item's old attempt into the new run (or continues the copy a killed rejudge
  // left) and judges its kernels; returns the new attempt's id. Ctrl-C between two
  // evaluations leaves it "interrupted", for a resume to finish.
  int64_t run(const WorkItem& item, const Status& status) const;

 private:
  store::Store& store_;
  int64_t new_run_;
  std::map<AttemptKey, store::AttemptSummary> old_;
  std::string run_uuid_;
  Judge judge_;
  bool compile_only_;
  const std::atomic<bool>* interrupt_;
};

}  // namespace mgk::bench_run
