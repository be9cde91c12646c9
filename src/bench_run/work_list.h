// What a benchmark run is made of, and what of it is left: the (problem, sample) attempts
// it plans, matched against the attempts the store holds for the run. A pure function of
// the two, so any executor (this process's threads, Slurm array tasks) decides alike what
// is done, what to continue and what to start.
#pragma once
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/records.h"

namespace mgk::bench_run {

struct AttemptKey {
  std::string problem;
  int sample = 0;
  auto operator<=>(const AttemptKey&) const = default;
};

// Every problem's sample 0 first, then every problem's sample 1, ...: a run stopped part
// way has as many problems as possible covered.
std::vector<AttemptKey> planned_attempts(const std::vector<std::string>& problems, int samples);

// Shard `index` of `count` (0-based), what one Slurm array task runs: every count-th planned
// attempt from the index-th on, so the shards partition the plan and each gets a mix of
// problems. UsageError unless 0 <= index < count.
std::vector<AttemptKey> shard_of(const std::vector<AttemptKey>& planned, int index, int count);

struct WorkItem {
  AttemptKey key;
  std::optional<int64_t> continue_attempt;  // a stored attempt to resume; none: start one
};

struct WorkList {
  std::vector<WorkItem> to_run;           // in plan order
  std::vector<int64_t> finished;          // stored attempts that need nothing more
};

// A planned attempt is finished when its stored attempt is "done" (or "failed", unless
// `retry_failed`); one left "running" (its process died) or "interrupted" is continued;
// one the store does not hold is started. Where a key was stored twice, the newer attempt
// counts. Stored attempts outside the plan are left alone.
WorkList remaining_work(const std::vector<AttemptKey>& planned,
                        const std::vector<store::AttemptSummary>& stored, bool retry_failed);

}  // namespace mgk::bench_run
