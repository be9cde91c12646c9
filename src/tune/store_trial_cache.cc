#include "tune/store_trial_cache.h"

namespace mgk::tune {

store::TuningTrial to_store(const Trial& trial) {
  const TrialContext& c = trial.key.context;
  store::TuningTrial s;
  s.kernel_hash = c.kernel_hash;
  s.problem = c.problem;
  s.size = c.size;
  s.world_size = c.world_size;
  s.gpu_model = c.gpu_model;
  s.driver = c.driver;
  s.params = nlohmann::json::parse(trial.key.params);
  s.status = to_string(trial.status);
  s.time_us = trial.status == TrialStatus::kOk ? trial.time_us : 0;
  s.message = trial.message;
  return s;
}

Trial from_store(const store::TuningTrial& s) {
  Trial t;
  t.key.context = TrialContext{s.kernel_hash, s.problem, s.size, s.world_size, s.gpu_model,
                               s.driver};
  t.key.params = store::canonical_params(s.params);
  t.status = trial_status_from_string(s.status);
  t.time_us = s.time_us;
  t.message = s.message;
  t.from_cache = true;
  return t;
}

std::optional<Trial> StoreTrialCache::find(const TrialKey& key) {
  const TrialContext& c = key.context;
  store::TuningKey k{c.kernel_hash, c.problem,  c.size, c.world_size,
                     c.gpu_model,   c.driver,   nlohmann::json::parse(key.params)};
  auto found = store_.find_tuning_trial(k);
  if (!found) return std::nullopt;
  return from_store(*found);
}

void StoreTrialCache::record(const Trial& trial) { store_.record_tuning_trial(to_store(trial)); }

std::vector<Trial> StoreTrialCache::trials_for(const std::string& kernel_hash,
                                               const std::string& problem) {
  store::TuningTrialFilter filter;
  filter.kernel_hash = kernel_hash;
  filter.problem = problem;
  std::vector<Trial> out;
  for (const auto& s : store_.tuning_trials(filter)) out.push_back(from_store(s));
  return out;
}

}  // namespace mgk::tune
