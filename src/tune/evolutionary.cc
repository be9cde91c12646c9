// A genetic algorithm over the discrete space, tuned for budgets of tens to hundreds of
// evaluations. Parameter values are usually ordered (sizes, counts), so most children are a
// one-value step from a tournament winner (exploitation of the neighbourhood), the rest
// come from uniform crossover of two winners plus mutation (exploration). Survival is
// (mu + lambda): the population is the best mu configurations of the current epoch. When the
// best has not improved for a few generations the search has settled in a basin, possibly
// a deceptive one: the population restarts from random configurations (what was found is
// kept by the tuner, and configurations are never proposed twice).
#include "tune/evolutionary.h"

#include <algorithm>
#include <limits>
#include <unordered_set>

#include "tune/rng.h"
#include "tune/sampler.h"

namespace mgk::tune {
namespace {

constexpr std::size_t kPopulation = 12;
constexpr int kTournamentSize = 3;
constexpr double kNeighbourChildRate = 0.75;  // else crossover + mutation
constexpr double kCrossoverRate = 0.9;
constexpr double kNeighbourMutationRate = 0.7;  // else a uniformly random value
constexpr int kBreedAttempts = 32;              // before falling back to a random newcomer
constexpr int kStaleGenerations = 3;            // without improvement: restart
constexpr double kImprovement = 1e-3;           // relative; smaller gains are noise

class Evolutionary : public SearchStrategy {
 public:
  Evolutionary(const SearchSpace& space, std::uint64_t seed, std::size_t population)
      : space_(space),
        rng_(seed ^ 0x6A09E667F3BCC909ull),
        fresh_(space, seed),
        population_size_(population) {}

  std::vector<Config> propose(std::size_t max_count) override {
    if (pending_.empty() && outstanding_ == 0) next_generation();
    std::vector<Config> batch;
    while (!pending_.empty() && batch.size() < max_count) {
      batch.push_back(std::move(pending_.front()));
      pending_.erase(pending_.begin());
      ++outstanding_;
    }
    return batch;
  }

  void observe(const Config& config, double score) override {
    offspring_.push_back(Member{config, score});
    if (outstanding_ > 0) --outstanding_;
  }

 private:
  struct Member {
    Config config;
    double score;
  };

  void next_generation() {
    track_progress();
    population_.insert(population_.end(), offspring_.begin(), offspring_.end());
    offspring_.clear();
    if (stale_generations_ >= kStaleGenerations) restart();
    std::stable_sort(population_.begin(), population_.end(),
                     [](const Member& a, const Member& b) { return a.score < b.score; });
    if (population_.size() > population_size_) population_.resize(population_size_);

    for (std::size_t i = 0; i < population_size_; ++i) {
      std::optional<Config> child;
      if (population_.size() >= 2)
        child = rng_.chance(kNeighbourChildRate) ? neighbour_child() : crossover_child();
      if (!child) child = newcomer();
      if (!child) break;  // every valid configuration has been proposed
      proposed_.insert(space_.encode(*child));
      pending_.push_back(std::move(*child));
    }
  }

  void track_progress() {
    if (offspring_.empty()) return;
    double best = std::numeric_limits<double>::infinity();
    for (const auto& m : offspring_) best = std::min(best, m.score);
    if (best < epoch_best_ * (1 - kImprovement)) {
      epoch_best_ = best;
      stale_generations_ = 0;
    } else {
      ++stale_generations_;
    }
  }

  void restart() {
    population_.clear();  // the next generation is all newcomers
    epoch_best_ = std::numeric_limits<double>::infinity();
    stale_generations_ = 0;
  }

  // A tournament winner with one parameter moved to a neighbouring value.
  std::optional<Config> neighbour_child() {
    for (int attempt = 0; attempt < kBreedAttempts; ++attempt) {
      Config child = tournament();
      const std::size_t g = rng_.below(child.size());
      const std::int64_t n = std::int64_t(space_.parameters()[g].values.size());
      const std::int64_t v = std::int64_t(child[g]) + (rng_.chance(0.5) ? 1 : -1);
      if (v < 0 || v >= n) continue;
      child[g] = std::uint32_t(v);
      if (is_new_and_valid(child)) return child;
    }
    return crossover_child();
  }

  std::optional<Config> crossover_child() {
    for (int attempt = 0; attempt < kBreedAttempts; ++attempt) {
      const Config& a = tournament();
      const Config& b = tournament();
      Config child = a;
      if (rng_.chance(kCrossoverRate))
        for (std::size_t g = 0; g < child.size(); ++g)
          if (rng_.chance(0.5)) child[g] = b[g];
      mutate(child);
      if (is_new_and_valid(child)) return child;
    }
    return std::nullopt;
  }

  bool is_new_and_valid(const Config& c) const {
    return !proposed_.count(space_.encode(c)) && space_.satisfies(c);
  }

  const Config& tournament() {
    const Member* best = &population_[rng_.below(population_.size())];
    for (int k = 1; k < kTournamentSize; ++k) {
      const Member* m = &population_[rng_.below(population_.size())];
      if (m->score < best->score) best = m;
    }
    return best->config;
  }

  // One gene always changes; each other gene with probability 1/genes.
  void mutate(Config& c) {
    const std::size_t genes = c.size();
    const std::size_t forced = rng_.below(genes);
    for (std::size_t g = 0; g < genes; ++g)
      if (g == forced || rng_.chance(1.0 / double(genes))) mutate_gene(c, g);
  }

  void mutate_gene(Config& c, std::size_t g) {
    const std::int64_t n = std::int64_t(space_.parameters()[g].values.size());
    if (n == 1) return;
    std::int64_t v = c[g];
    if (rng_.chance(kNeighbourMutationRate)) {
      const std::int64_t step = 1 + std::int64_t(rng_.below(2));  // 1 or 2 values away
      v += rng_.chance(0.5) ? step : -step;
      if (v < 0) v = -v;  // reflect at the ends
      if (v >= n) v = 2 * (n - 1) - v;
      v = std::clamp<std::int64_t>(v, 0, n - 1);
      if (v == std::int64_t(c[g])) v = (v + 1) % n;
    } else {
      v = std::int64_t(rng_.below(std::uint64_t(n)));
    }
    c[g] = std::uint32_t(v);
  }

  // A random configuration not proposed yet.
  std::optional<Config> newcomer() {
    for (;;) {
      auto c = fresh_.next();
      if (!c) return std::nullopt;
      if (!proposed_.count(space_.encode(*c))) return c;
    }
  }

  const SearchSpace& space_;
  Rng rng_;
  ValidConfigSampler fresh_;
  std::size_t population_size_;
  std::unordered_set<std::uint64_t> proposed_;
  std::vector<Member> population_;
  std::vector<Member> offspring_;  // observed since the last generation was bred
  std::vector<Config> pending_;    // bred, not handed out yet
  std::size_t outstanding_ = 0;    // handed out, not observed yet
  double epoch_best_ = std::numeric_limits<double>::infinity();
  int stale_generations_ = 0;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_evolutionary(const SearchSpace& space, std::uint64_t seed,
                                                  std::size_t max_evals) {
  // The population does not depend on the budget, so that a re-run with a larger budget
  // replays the same search from the cache and goes on from where it stopped. Small
  // populations converge in few evaluations; restarts provide the breadth.
  (void)max_evals;
  return std::make_unique<Evolutionary>(space, seed, kPopulation);
}

}  // namespace mgk::tune
