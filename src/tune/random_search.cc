#include "tune/sampler.h"
#include "tune/strategy_factories.h"

namespace mgk::tune {
namespace {

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

}  // namespace

std::unique_ptr<SearchStrategy> make_random(const SearchSpace& space, std::uint64_t seed) {
  return std::make_unique<RandomSearch>(space, seed);
}

}  // namespace mgk::tune
