// Uniform sampling without replacement: of indices in [0, n) for any n up to 2^63, in memory
// proportional to the draws made (a Fisher-Yates shuffle whose swaps live in a hash map),
// and of the valid configurations of a search space.
#pragma once
#include <cstdint>
#include <optional>
#include <unordered_map>

#include "tune/rng.h"
#include "tune/space.h"

namespace mgk::tune {

class UniqueSampler {
 public:
  UniqueSampler(std::uint64_t n, std::uint64_t seed) : n_(n), rng_(seed) {}

  // The next index never returned before; nullopt once all n were returned.
  std::optional<std::uint64_t> next();

  std::uint64_t drawn() const { return drawn_; }
  bool exhausted() const { return drawn_ == n_; }

 private:
  std::uint64_t at(std::uint64_t i) const {
    auto it = moved_.find(i);
    return it == moved_.end() ? i : it->second;
  }

  std::uint64_t n_;
  std::uint64_t drawn_ = 0;
  Rng rng_;
  std::unordered_map<std::uint64_t, std::uint64_t> moved_;  // position -> value, if swapped
};

// Configurations of a space in uniformly random order, each once, skipping those that
// violate the constraints. Keeps a reference to the space.
class ValidConfigSampler {
 public:
  ValidConfigSampler(const SearchSpace& space, std::uint64_t seed);

  // The next valid configuration never returned before; nullopt when none is left, or when
  // so many draws in a row violated the constraints that the rest is presumed invalid
  // (logged as a warning).
  std::optional<Config> next();

 private:
  const SearchSpace& space_;
  UniqueSampler indices_;
};

}  // namespace mgk::tune
