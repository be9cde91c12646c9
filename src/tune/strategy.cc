#include "tune/strategy.h"

#include <stdexcept>

#include "common/error.h"
#include "tune/strategy_factories.h"

namespace mgk::tune {
namespace {

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
