#include "common/error.h"
#include "tune/strategy_factories.h"

namespace mgk::tune {
namespace {

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

}  // namespace

std::unique_ptr<SearchStrategy> make_exhaustive(const SearchSpace& space) {
  // Scanning for valid configurations is cheap, but not over trillions of them.
  constexpr std::uint64_t kMaxScan = std::uint64_t{1} << 32;
  if (space.size() > kMaxScan)
    throw UsageError("the exhaustive strategy cannot walk " + std::to_string(space.size()) +
                     " configurations; use --strategy random or evolutionary");
  return std::make_unique<Exhaustive>(space);
}

}  // namespace mgk::tune
