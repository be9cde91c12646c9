// The trial cache kept in the SQLite store (tuning_trials table), so tuning resumes across
// runs and machines' shards merge. Compile and evaluation seconds are not persisted.
#pragma once
#include "store/store.h"
#include "tune/trial_cache.h"

namespace mgk::tune {

class StoreTrialCache : public TrialCache {
 public:
  explicit StoreTrialCache(store::Store& store) : store_(store) {}

  std::optional<Trial> find(const TrialKey& key) override;
  void record(const Trial& trial) override;
  std::vector<Trial> trials_for(const std::string& kernel_hash,
                                const std::string& problem) override;

 private:
  store::Store& store_;
};

// Conversions between the tuner's and the store's records (public for tests).
store::TuningTrial to_store(const Trial& trial);
Trial from_store(const store::TuningTrial& stored);

}  // namespace mgk::tune
