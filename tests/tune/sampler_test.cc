#include "tune/sampler.h"

#include <gtest/gtest.h>

#include <set>

#include "tune/markers.h"

namespace mgk::tune {
namespace {

TEST(UniqueSampler, ReturnsEveryIndexOnceThenStops) {
  UniqueSampler s(1000, 99);
  std::set<std::uint64_t> seen;
  while (auto i = s.next()) {
    EXPECT_LT(*i, 1000u);
    EXPECT_TRUE(seen.insert(*i).second);
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_TRUE(s.exhausted());
}

TEST(UniqueSampler, WorksOnHugeRangesWithoutMemoryForTheWholeRange) {
  UniqueSampler s(std::uint64_t{1} << 62, 1);
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 10000; ++i) EXPECT_TRUE(seen.insert(*s.next()).second);
}

TEST(UniqueSampler, IsRoughlyUniform) {
  // First draws over 50,000 shuffles of 10 elements: each value about 5,000 times.
  std::vector<int> first(10, 0);
  for (std::uint64_t seed = 0; seed < 50000; ++seed) ++first[*UniqueSampler(10, seed).next()];
  for (int count : first) EXPECT_NEAR(count, 5000, 400);
}

TEST(ValidConfigSampler, SkipsConfigurationsViolatingTheConstraints) {
  SearchSpace space = parse_markers(
      "// mgk:tune A range(1, 10)\n"
      "// mgk:tune B range(1, 10)\n"
      "// mgk:tune-constraint A < B\n");
  ValidConfigSampler s(space, 5);
  int n = 0;
  while (auto c = s.next()) {
    EXPECT_LT((*c)[0], (*c)[1]);
    ++n;
  }
  EXPECT_EQ(n, 45);
}

}  // namespace
}  // namespace mgk::tune
