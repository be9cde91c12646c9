#include "tune/strategy.h"

#include <stdexcept>

#include "common/error.h"
#include "tune/evolutionary.h"
#include "tune/sampler.h"

namespace mgk::tune {

namespace {

// ---- the two simple strategies (the evolutionary one has a file of its own)

// Every valid configuration in mixed-radix order (first parameter slowest).
class Exhaustive : public SearchStrategy {
 public:
  explicit Exhaustive(const SearchSpace& space) : space_(space) {}

  std::vector<Config> propose(std::size_t max_count) override {
    std::vector<Config> batch;
    while (batch.size() < max_count && next_ < space_.size()) {
      Config c = space_.decode(next_++);
      if (space_.satisfies(c)) batch.push_back(std::move(c));
    }
    return batch;
  }

  void observe(const Config&, double) override {}

 private:
  const SearchSpace& space_;
  std::uint64_t next_ = 0;
};

std::unique_ptr<SearchStrategy> make_exhaustive(const SearchSpace& space) {
  // Scanning for valid configurations is cheap, but not over trillions of them.
  constexpr std::uint64_t kMaxScan = std::uint64_t{1} << 32;
  if (space.size() > kMaxScan)
    throw UsageError("the exhaustive strategy cannot walk " + std::to_string(space.size()) +
                     " configurations; use --strategy random or evolutionary");
  return std::make_unique<Exhaustive>(space);
}

// Uniform sampling without replacement.
class RandomSearch : public SearchStrategy {
 public:
  RandomSearch(const SearchSpace& space, std::uint64_t seed) : sampler_(space, seed) {}

  std::vector<Config> propose(std::size_t max_count) override {
    std::vector<Config> batch;
    while (batch.size() < max_count) {
      auto c = sampler_.next();
      if (!c) break;
      batch.push_back(std::move(*c));
    }
    return batch;
  }

  void observe(const Config&, double) override {}

 private:
  ValidConfigSampler sampler_;
};

std::unique_ptr<SearchStrategy> make_random(const SearchSpace& space, std::uint64_t seed) {
  return std::make_unique<RandomSearch>(space, seed);
}

// ---- the registry

using Factory = std::unique_ptr<SearchStrategy> (*)(const SearchSpace&, std::uint64_t seed,
                                                    std::size_t max_evals);
struct Entry {
  StrategyInfo info;
  Factory make;  // null for "auto", which resolves to another entry
};

const std::vector<Entry>& registry() {
  static const std::vector<Entry> table = {
      {{"auto", "exhaustive when every valid configuration fits in the budget, else "
                "evolutionary"},
       nullptr},
      {{"exhaustive", "every valid configuration, in order"},
       [](const SearchSpace& s, std::uint64_t, std::size_t) { return make_exhaustive(s); }},
      {{"random", "uniform sampling without replacement"},
       [](const SearchSpace& s, std::uint64_t seed, std::size_t) { return make_random(s, seed); }},
      {{"evolutionary", "genetic search: tournament selection, crossover, mutation, elitism"},
       make_evolutionary},
  };
  return table;
}

}  // namespace

const std::vector<StrategyInfo>& strategies() {
  static const std::vector<StrategyInfo> infos = [] {
    std::vector<StrategyInfo> v;
    for (const auto& e : registry()) v.push_back(e.info);
    return v;
  }();
  return infos;
}

std::string resolve_strategy_name(const std::string& name, const SearchSpace& space,
                                  std::size_t max_evals) {
  if (name != "auto") return name;
  if (space.size() <= max_evals) return "exhaustive";
  auto valid = space.count_valid(std::uint64_t{1} << 16);
  return valid && *valid <= max_evals ? "exhaustive" : "evolutionary";
}

void check_strategy_name(const std::string& name) {
  std::string valid;
  for (const auto& e : registry()) {
    if (name == e.info.name) return;
    valid += std::string(valid.empty() ? "" : ", ") + e.info.name;
  }
  throw UsageError("unknown search strategy '" + name + "'; choose one of " + valid);
}

std::unique_ptr<SearchStrategy> make_strategy(const std::string& name, const SearchSpace& space,
                                              std::uint64_t seed, std::size_t max_evals) {
  check_strategy_name(name);
  const std::string resolved = resolve_strategy_name(name, space, max_evals);
  for (const auto& e : registry())
    if (e.make && resolved == e.info.name) return e.make(space, seed, max_evals);
  throw std::logic_error("strategy '" + resolved + "' has no factory");
}

}  // namespace mgk::tune
