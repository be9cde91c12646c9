// Where trials are kept between runs, so a re-run resumes instead of re-measuring.
// InMemoryTrialCache serves tests and throwaway runs; StoreTrialCache (store_trial_cache.h)
// keeps them in the SQLite store.
#pragma once
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "tune/trial.h"

namespace mgk::tune {

class TrialCache {
 public:
  virtual ~TrialCache() = default;
  // The trial stored under `key`, if any (returned with from_cache set).
  virtual std::optional<Trial> find(const TrialKey& key) = 0;
  // Stores `trial` under trial.key, replacing an earlier one with the same key.
  virtual void record(const Trial& trial) = 0;
  // Every stored trial of this kernel on this problem (any size, world size or machine).
  virtual std::vector<Trial> trials_for(const std::string& kernel_hash,
                                        const std::string& problem) = 0;
};

// Thread-safe.
class InMemoryTrialCache : public TrialCache {
 public:
  std::optional<Trial> find(const TrialKey& key) override;
  void record(const Trial& trial) override;
  std::vector<Trial> trials_for(const std::string& kernel_hash,
                                const std::string& problem) override;

  size_t size() const;
  size_t records() const;  // calls to record() so far

 private:
  using Index = std::tuple<std::string, std::string, std::string, int, std::string,
                           std::string, std::string>;
  static Index index_of(const TrialKey& key);

  mutable std::mutex mu_;
  std::map<Index, Trial> trials_;
  size_t records_ = 0;
};

}  // namespace mgk::tune
