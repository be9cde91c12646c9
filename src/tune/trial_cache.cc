#include "tune/trial_cache.h"

namespace mgk::tune {

InMemoryTrialCache::Index InMemoryTrialCache::index_of(const TrialKey& key) {
  const TrialContext& c = key.context;
  return {c.kernel_hash, c.problem, c.size, c.world_size, c.gpu_model, c.driver, key.params};
}

std::optional<Trial> InMemoryTrialCache::find(const TrialKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = trials_.find(index_of(key));
  if (it == trials_.end()) return std::nullopt;
  Trial t = it->second;
  t.from_cache = true;
  return t;
}

void InMemoryTrialCache::record(const Trial& trial) {
  std::lock_guard<std::mutex> lock(mu_);
  Trial stored = trial;
  stored.from_cache = false;
  trials_[index_of(trial.key)] = std::move(stored);
  ++records_;
}

std::vector<Trial> InMemoryTrialCache::trials_for(const std::string& kernel_hash,
                                                  const std::string& problem) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Trial> out;
  for (const auto& [index, trial] : trials_) {
    if (trial.key.context.kernel_hash != kernel_hash || trial.key.context.problem != problem)
      continue;
    out.push_back(trial);
    out.back().from_cache = true;
  }
  return out;
}

size_t InMemoryTrialCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return trials_.size();
}

size_t InMemoryTrialCache::records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

}  // namespace mgk::tune
