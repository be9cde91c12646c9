#include "llm/cost.h"

#include <gtest/gtest.h>

namespace mgk::llm {
namespace {

TEST(Cost, EachKindOfTokenAtItsOwnRate) {
  Price price{2.0, 0.5, 8.0, 2.5};
  Usage u;
  u.input_tokens = 1'000'000;
  u.cached_input_tokens = 200'000;
  u.cache_creation_tokens = 100'000;
  u.output_tokens = 500'000;
  u.reasoning_tokens = 100'000;  // part of output_tokens, not charged again
  // 700k*2 + 200k*0.5 + 100k*2.5 + 500k*8 = 1.4 + 0.1 + 0.25 + 4.0 dollars
  EXPECT_DOUBLE_EQ(cost_usd(u, price), 5.75);
}

TEST(Cost, CacheWritesDefaultToTheInputPrice) {
  Price price{3.0, 0.3, 15.0, std::nullopt};
  Usage u;
  u.input_tokens = 1000;
  u.cache_creation_tokens = 1000;
  EXPECT_DOUBLE_EQ(cost_usd(u, price), 0.003);
}

TEST(Cost, InconsistentCountsAreClampedNotChargedTwice) {
  Price price{1.0, 0.1, 1.0, std::nullopt};
  Usage u;
  u.input_tokens = 100;
  u.cached_input_tokens = 500;  // a server that counts cached tokens outside prompt_tokens
  EXPECT_DOUBLE_EQ(cost_usd(u, price), 0.00001);  // all 100 as cached, at $0.10 per million
}

}  // namespace
}  // namespace mgk::llm
