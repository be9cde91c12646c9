// The evolutionary search strategy (evolutionary.cc), for the registry in strategy.cc
// (callers use make_strategy).
#pragma once
#include <cstdint>
#include <memory>

#include "tune/strategy.h"

namespace mgk::tune {

// A genetic algorithm: tournament selection, neighbour steps, uniform crossover, mutation,
// (mu + lambda) survival, restarts when it stalls. The budget does not change the search.
std::unique_ptr<SearchStrategy> make_evolutionary(const SearchSpace& space, std::uint64_t seed,
                                                  std::size_t max_evals);

}  // namespace mgk::tune
