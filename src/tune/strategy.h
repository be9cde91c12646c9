// Search strategies behind one interface, chosen by name (make_strategy). A strategy sees
// configurations and their scores only; it never knows how they are measured.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tune/space.h"

namespace mgk::tune {

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;

  // The next configurations to measure, at most `max_count` (> 0): each satisfies the
  // constraints and was never proposed before. Empty means the strategy has nothing left to
  // try. The caller observes every configuration of a batch before asking for the next one.
  virtual std::vector<Config> propose(std::size_t max_count) = 0;

  // The score of a proposed configuration: lower is better, +infinity for a failure.
  virtual void observe(const Config& config, double score) = 0;
};

struct StrategyInfo {
  const char* name;
  const char* summary;
};

// The registry, in the order `mgk tune --help` lists them.
const std::vector<StrategyInfo>& strategies();

// Throws the UsageError make_strategy would for a name that is not in the registry.
void check_strategy_name(const std::string& name);

// "auto" picks exhaustive when the whole space fits in `max_evals`, else evolutionary.
// Unknown names: UsageError listing the valid ones. Same name, space and seed: same search.
std::unique_ptr<SearchStrategy> make_strategy(const std::string& name, const SearchSpace& space,
                                              std::uint64_t seed, std::size_t max_evals);

// The strategy "auto" resolves to, for reports.
std::string resolve_strategy_name(const std::string& name, const SearchSpace& space,
                                  std::size_t max_evals);

}  // namespace mgk::tune
