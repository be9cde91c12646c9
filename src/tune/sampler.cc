#include "tune/sampler.h"

#include "common/log.h"
#include "tune/space.h"

namespace mgk::tune {

std::optional<std::uint64_t> UniqueSampler::next() {
  if (drawn_ == n_) return std::nullopt;
  // Swap position drawn_ with a uniformly chosen position in [drawn_, n_).
  const std::uint64_t j = drawn_ + rng_.below(n_ - drawn_);
  const std::uint64_t value = at(j);
  moved_[j] = at(drawn_);
  moved_.erase(drawn_);
  ++drawn_;
  return value;
}

}  // namespace mgk::tune

namespace mgk::tune {

ValidConfigSampler::ValidConfigSampler(const SearchSpace& space, std::uint64_t seed)
    : space_(space), indices_(space.size(), seed) {}

std::optional<Config> ValidConfigSampler::next() {
  constexpr std::uint64_t kMaxRejectionsInARow = 200000;
  for (std::uint64_t rejected = 0; rejected < kMaxRejectionsInARow; ++rejected) {
    auto index = indices_.next();
    if (!index) return std::nullopt;
    Config config = space_.decode(*index);
    if (space_.satisfies(config)) return config;
  }
  log::warning(std::to_string(kMaxRejectionsInARow) +
               " random configurations in a row violated the mgk:tune-constraints; "
               "treating the rest of the space as invalid");
  return std::nullopt;
}

}  // namespace mgk::tune
