#include "tune/space.h"

#include <gtest/gtest.h>

#include <set>

#include "common/error.h"
#include "tune/markers.h"

namespace mgk::tune {
namespace {

SearchSpace blocks_and_chunks() {
  return parse_markers(
      "// mgk:tune BLOCKS 8 16 32 64\n"
      "// mgk:tune CHUNK_KB range(64, 2048, *2)\n"
      "// mgk:tune MECH kTma kLdSt\n"
      "// mgk:tune-constraint BLOCKS * CHUNK_KB <= 4096\n");
}

TEST(SearchSpace, DecodeEncodeRoundTripInMixedRadix) {
  SearchSpace s = blocks_and_chunks();
  ASSERT_EQ(s.size(), 4u * 6u * 2u);
  std::set<Config> seen;
  for (std::uint64_t i = 0; i < s.size(); ++i) {
    Config c = s.decode(i);
    EXPECT_EQ(s.encode(c), i);
    seen.insert(c);
  }
  EXPECT_EQ(seen.size(), s.size());
  EXPECT_EQ(s.decode(0), (Config{0, 0, 0}));
  EXPECT_EQ(s.decode(1), (Config{0, 0, 1}));  // the last parameter varies fastest
  EXPECT_EQ(s.decode(2), (Config{0, 1, 0}));
}

TEST(SearchSpace, ConstraintsFilterConfigurations) {
  SearchSpace s = blocks_and_chunks();
  std::uint64_t valid = 0;
  for (std::uint64_t i = 0; i < s.size(); ++i) {
    Config c = s.decode(i);
    const double blocks = *s.parameters()[0].values[c[0]].number;
    const double chunk = *s.parameters()[1].values[c[1]].number;
    EXPECT_EQ(s.satisfies(c), blocks * chunk <= 4096) << s.describe(c);
    valid += s.satisfies(c) ? 1 : 0;
  }
  // BLOCKS 8: chunks 64..512 (4); 16: 64..256 (3); 32: 64,128 (2); 64: 64 (1); x2 MECH.
  EXPECT_EQ(valid, 20u);
  EXPECT_EQ(s.count_valid(), std::optional<std::uint64_t>(20));
  EXPECT_EQ(s.count_valid(10), std::nullopt);  // above the limit: not counted
}

TEST(SearchSpace, AConstraintThatCannotBeEvaluatedNamesItsLine) {
  SearchSpace s = parse_markers(
      "// mgk:tune A 0 1 2\n"
      "// mgk:tune-constraint 8 % A == 0\n");
  EXPECT_TRUE(s.satisfies(Config{1}));
  try {
    s.satisfies(Config{0});
    FAIL() << "modulo by zero must throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("modulo by zero"), std::string::npos);
    ASSERT_FALSE(e.context().empty());
    EXPECT_NE(e.context()[0].find("line 2, for A=0"), std::string::npos) << e.context()[0];
  }
}

TEST(SearchSpace, DefinesJsonAndDescription) {
  SearchSpace s = parse_markers(
      "// mgk:tune ZETA 1 2\n"
      "// mgk:tune ALPHA 0.5 0.25\n"
      "// mgk:tune MECH kTma kLdSt\n");
  Config c{1, 0, 1};
  EXPECT_EQ(s.defines(c), (std::vector<std::string>{"ZETA=2", "ALPHA=0.5", "MECH=kLdSt"}));
  EXPECT_EQ(s.canonical(c), R"({"ALPHA":0.5,"MECH":"kLdSt","ZETA":2})");  // sorted keys
  EXPECT_EQ(s.describe(c), "ZETA=2 ALPHA=0.5 MECH=kLdSt");
  EXPECT_EQ(s.from_json(s.to_json(c)), std::optional<Config>(c));
  EXPECT_EQ(s.from_json(nlohmann::json::parse(R"({"ALPHA":0.5,"MECH":"kLdSt"})")), std::nullopt);
  EXPECT_EQ(s.from_json(nlohmann::json::parse(R"({"ALPHA":0.5,"MECH":"kLdSt","ZETA":3})")),
            std::nullopt);
  expr::Vars vars = s.variables(c);
  EXPECT_EQ(vars.size(), 2u);  // identifiers are not variables
  EXPECT_EQ(vars["ZETA"], 2);
}

TEST(SearchSpace, HugeProductsAreRefused) {
  std::string source;
  for (int i = 0; i < 8; ++i) source += "// mgk:tune P" + std::to_string(i) + " range(1, 4096)\n";
  EXPECT_THROW(parse_markers(source), UsageError);
}

}  // namespace
}  // namespace mgk::tune
