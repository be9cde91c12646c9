#include "process/output.h"

#include <random>

#include <gtest/gtest.h>

namespace mgk::process {
namespace {

std::string pattern(size_t n) {
  std::string s(n, ' ');
  for (size_t i = 0; i < n; ++i) s[i] = char('a' + (i * 7 + i / 26) % 26);
  return s;
}

TEST(OutputCollector, MatchesCutMiddleOfTheWholeStreamWhateverTheChunking) {
  std::mt19937 rng(7);
  for (size_t total : {0u, 1u, 4999u, 10000u, 10001u, 15000u, 250000u}) {
    std::string text = pattern(total);
    OutputCollector collector;
    size_t pos = 0;
    while (pos < total) {
      size_t n = std::min<size_t>(total - pos, 1 + rng() % 9000);
      collector.append(std::string_view(text).substr(pos, n));
      pos += n;
    }
    EXPECT_EQ(collector.total_bytes(), total);
    EXPECT_EQ(collector.text(), cut_middle(text)) << "total " << total;
  }
}

TEST(OutputCollector, SmallLimitsForTests) {
  OutputCollector c(10, 3);
  c.append("0123456789ABCDEF");
  EXPECT_EQ(c.text(), "012" + cut_marker(10) + "DEF");
}

}  // namespace
}  // namespace mgk::process
