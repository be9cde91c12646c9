#include "tune/strategy.h"

#include <gtest/gtest.h>

#include <limits>
#include <set>

#include "common/error.h"
#include "synthetic.h"
#include "tune/markers.h"

namespace mgk::tune {
namespace {

using test::Landscape;

struct SearchOutcome {
  double best = std::numeric_limits<double>::infinity();
  Config best_config;
  std::vector<Config> proposed;
  bool exhausted = false;
};

// Drives a strategy directly (no tuner) for up to `budget` evaluations of `f`.
SearchOutcome drive(SearchStrategy& strategy, const std::function<Measurement(const Config&)>& f,
                    std::size_t budget) {
  SearchOutcome out;
  while (out.proposed.size() < budget) {
    std::vector<Config> batch = strategy.propose(budget - out.proposed.size());
    if (batch.empty()) {
      out.exhausted = true;
      break;
    }
    EXPECT_LE(batch.size(), budget - out.proposed.size());
    for (const Config& c : batch) {
      Measurement m = f(c);
      const double score = m.status == TrialStatus::kOk
                               ? m.time_us
                               : std::numeric_limits<double>::infinity();
      strategy.observe(c, score);
      out.proposed.push_back(c);
      if (score < out.best) out.best = score, out.best_config = c;
    }
  }
  return out;
}

void expect_unique_and_valid(const SearchSpace& space, const std::vector<Config>& configs) {
  std::set<Config> seen;
  for (const Config& c : configs) {
    EXPECT_TRUE(space.satisfies(c)) << space.describe(c);
    EXPECT_TRUE(seen.insert(c).second) << "proposed twice: " << space.describe(c);
  }
}

SearchSpace small_constrained_space() {
  return parse_markers(
      "// mgk:tune BLOCKS 8 16 32 64\n"
      "// mgk:tune CHUNK_KB range(64, 2048, *2)\n"
      "// mgk:tune UNROLL range(1, 4)\n"
      "// mgk:tune-constraint BLOCKS * CHUNK_KB <= 16384\n");
}

// A bowl with its minimum at BLOCKS=32, CHUNK_KB=256, UNROLL=3.
Measurement small_bowl(const SearchSpace& s, const Config& c) {
  const double blocks = *s.parameters()[0].values[c[0]].number;
  const double chunk = *s.parameters()[1].values[c[1]].number;
  const double unroll = *s.parameters()[2].values[c[2]].number;
  Measurement m;
  if (unroll == 4 && blocks == 64) {  // a failing corner
    m.status = TrialStatus::kLaunch;
    return m;
  }
  m.status = TrialStatus::kOk;
  m.time_us = 5 + std::pow(std::log2(blocks / 32), 2) + std::pow(std::log2(chunk / 256), 2) +
              (unroll - 3) * (unroll - 3);
  return m;
}

TEST(Strategy, RegistryListsTheValidNamesOnError) {
  SearchSpace s = small_constrained_space();
  try {
    make_strategy("anneal", s, 1, 10);
    FAIL() << "an unknown strategy must throw";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown search strategy 'anneal'; choose one of auto, exhaustive, random, "
                 "evolutionary");
  }
  EXPECT_EQ(strategies().size(), 4u);
}

TEST(Strategy, AutoPicksExhaustiveOnlyWhenEverythingFits) {
  SearchSpace s = small_constrained_space();  // 96 configurations, 72 valid
  ASSERT_EQ(s.count_valid(), std::optional<std::uint64_t>(72));
  EXPECT_EQ(resolve_strategy_name("auto", s, 72), "exhaustive");
  EXPECT_EQ(resolve_strategy_name("auto", s, 71), "evolutionary");
  EXPECT_EQ(resolve_strategy_name("random", s, 10), "random");
}

TEST(Strategy, ExhaustiveVisitsEveryValidConfigurationAndFindsTheExactOptimum) {
  SearchSpace s = small_constrained_space();
  auto strategy = make_strategy("exhaustive", s, 0, 1000);
  SearchOutcome out = drive(*strategy, [&](const Config& c) { return small_bowl(s, c); }, 1000);
  EXPECT_TRUE(out.exhausted);
  EXPECT_EQ(out.proposed.size(), 72u);
  expect_unique_and_valid(s, out.proposed);
  EXPECT_EQ(s.describe(out.best_config), "BLOCKS=32 CHUNK_KB=256 UNROLL=3");
  EXPECT_DOUBLE_EQ(out.best, 5.0);
}

TEST(Strategy, RandomSamplesWithoutReplacementAndCoversTheSpace) {
  SearchSpace s = small_constrained_space();
  auto strategy = make_strategy("random", s, 42, 1000);
  SearchOutcome out = drive(*strategy, [&](const Config& c) { return small_bowl(s, c); }, 1000);
  EXPECT_TRUE(out.exhausted);
  EXPECT_EQ(out.proposed.size(), 72u);
  expect_unique_and_valid(s, out.proposed);
  EXPECT_DOUBLE_EQ(out.best, 5.0);
  // Not the exhaustive order.
  auto exhaustive = make_strategy("exhaustive", s, 0, 1000);
  EXPECT_NE(exhaustive->propose(72), out.proposed);
}

TEST(Strategy, RandomFindsTheOptimumWithinABudgetOfMostOfTheSpace) {
  SearchSpace s = small_constrained_space();
  int found = 0;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    auto strategy = make_strategy("random", s, seed, 60);
    SearchOutcome out = drive(*strategy, [&](const Config& c) { return small_bowl(s, c); }, 60);
    EXPECT_EQ(out.proposed.size(), 60u);
    found += out.best == 5.0 ? 1 : 0;
  }
  EXPECT_GE(found, 12);  // 60 of 72 draws: the optimum is among them 83% of the time
}

TEST(Strategy, EveryStrategyIsDeterministicGivenASeed) {
  SearchSpace s = test::landscape_space();
  for (const char* name : {"exhaustive", "random", "evolutionary"}) {
    SCOPED_TRACE(name);
    auto a = make_strategy(name, s, 7, 150);
    auto b = make_strategy(name, s, 7, 150);
    auto c = make_strategy(name, s, 8, 150);
    SearchOutcome oa = drive(*a, Landscape::measure, 150);
    SearchOutcome ob = drive(*b, Landscape::measure, 150);
    SearchOutcome oc = drive(*c, Landscape::measure, 150);
    EXPECT_EQ(oa.proposed, ob.proposed);
    if (std::string(name) != "exhaustive") {
      EXPECT_NE(oa.proposed, oc.proposed);
    }
  }
}

TEST(Strategy, EvolutionaryProposesOnlyNewValidConfigurations) {
  SearchSpace s = small_constrained_space();
  auto strategy = make_strategy("evolutionary", s, 3, 1000);
  SearchOutcome out = drive(*strategy, [&](const Config& c) { return small_bowl(s, c); }, 1000);
  EXPECT_TRUE(out.exhausted);  // it ends once every valid configuration was tried
  EXPECT_EQ(out.proposed.size(), 72u);
  expect_unique_and_valid(s, out.proposed);
}

TEST(Strategy, EvolutionaryFindsTheHiddenOptimumAndBeatsRandom) {
  // 20,736 configurations, a wide deceptive basin, failing regions, a fast wrong corner;
  // a budget of 300 evaluations (1.4% of the space).
  SearchSpace s = test::landscape_space();
  constexpr std::size_t kBudget = 300;
  constexpr int kSeeds = 20;
  int ga_found = 0, random_found = 0;
  double ga_total = 0, random_total = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    auto ga = make_strategy("evolutionary", s, seed, kBudget);
    auto rnd = make_strategy("random", s, seed, kBudget);
    SearchOutcome g = drive(*ga, Landscape::measure, kBudget);
    SearchOutcome r = drive(*rnd, Landscape::measure, kBudget);
    EXPECT_EQ(g.proposed.size(), kBudget);
    expect_unique_and_valid(s, g.proposed);
    ga_found += Landscape::is_optimum(g.best_config) ? 1 : 0;
    random_found += Landscape::is_optimum(r.best_config) ? 1 : 0;
    ga_total += g.best;
    random_total += r.best;
    EXPECT_GE(g.best, Landscape::kOptimumUs);  // the fast wrong corner never counts
  }
  EXPECT_GE(ga_found, kSeeds * 3 / 5) << "evolutionary found the optimum " << ga_found << "/"
                                      << kSeeds;
  EXPECT_LT(ga_total / kSeeds, random_total / kSeeds);
  EXPECT_GT(ga_found, random_found);
  std::printf("optimum found: evolutionary %d/%d, random %d/%d; mean best %.2f vs %.2f us\n",
              ga_found, kSeeds, random_found, kSeeds, ga_total / kSeeds, random_total / kSeeds);
}

}  // namespace
}  // namespace mgk::tune
