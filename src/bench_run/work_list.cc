#include "bench_run/work_list.h"

#include <map>

#include "common/error.h"

namespace mgk::bench_run {

std::vector<AttemptKey> planned_attempts(const std::vector<std::string>& problems, int samples) {
  std::vector<AttemptKey> out;
  for (int s = 0; s < samples; ++s)
    for (const auto& p : problems) out.push_back({p, s});
  return out;
}

std::vector<AttemptKey> shard_of(const std::vector<AttemptKey>& planned, int index, int count) {
  if (count < 1 || index < 0 || index >= count)
    throw UsageError("shard " + std::to_string(index) + "/" + std::to_string(count) + " does not exist (0 <= K < N)");
  std::vector<AttemptKey> out;
  for (size_t i = size_t(index); i < planned.size(); i += size_t(count)) out.push_back(planned[i]);
  return out;
}

WorkList remaining_work(const std::vector<AttemptKey>& planned,
                        const std::vector<store::AttemptSummary>& stored, bool retry_failed) {
  std::map<AttemptKey, const store::AttemptSummary*> newest;
  for (const auto& a : stored) {
    auto& slot = newest[{a.problem, a.sample}];
    if (!slot || a.id > slot->id) slot = &a;
  }
  WorkList w;
  for (const auto& key : planned) {
    auto it = newest.find(key);
    if (it == newest.end()) {
      w.to_run.push_back({key, std::nullopt});
      continue;
    }
    const store::AttemptSummary& a = *it->second;
    const bool finished = a.status == store::Status::kDone || (a.status == store::Status::kFailed && !retry_failed);
    if (finished) w.finished.push_back(a.id);
    else w.to_run.push_back({key, a.id});
  }
  return w;
}

}  // namespace mgk::bench_run
