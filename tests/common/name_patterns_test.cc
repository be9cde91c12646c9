#include "common/name_patterns.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/error.h"
#include "support/test_paths.h"

namespace mgk {
namespace {

TEST(NamePatterns, CommaListsAndRepeatedValuesMakeOneListInOrderEachOnce) {
  const NamePatterns p = NamePatterns::parse({"collectives/all_*, tp/gemm_a*", "ep/*,collectives/all_*", ""});
  EXPECT_EQ(p.patterns, (std::vector<std::string>{"collectives/all_*", "tp/gemm_a*", "ep/*"}));
  EXPECT_EQ(p.text(), "collectives/all_*,tp/gemm_a*,ep/*");
  EXPECT_TRUE(p.matches("collectives/all_reduce"));
  EXPECT_TRUE(p.matches("tp/gemm_allgather"));
  EXPECT_FALSE(p.matches("collectives/reduce"));
  EXPECT_FALSE(p.matches("tp/gemm_reducescatter"));
}

TEST(NamePatterns, ANameAloneMatchesWithoutItsCategoryAndNothingMeansEverything) {
  const NamePatterns p = NamePatterns::parse({"all_reduce,gath?r"});
  EXPECT_TRUE(p.matches("collectives/all_reduce"));
  EXPECT_TRUE(p.matches("collectives/gather"));
  EXPECT_FALSE(p.matches("collectives/all_gather"));
  const NamePatterns all = NamePatterns::parse({});
  EXPECT_TRUE(all.all());
  EXPECT_TRUE(all.matches("anything/at_all"));
  EXPECT_EQ(all.text(), "*");
}

TEST(NamePatterns, AFileGivesOnePerLineWithCommentsAndIsRefusedWhenMissingOrEmpty) {
  test::TempDir dir("mgk-patterns");
  const auto file = dir.path() / "subset.txt";
  std::ofstream(file) << "# the subset of the paper\ncollectives/all_reduce\n\n  tp/*   # every TP problem\n";
  const NamePatterns p = NamePatterns::parse({"ep/moe"}, file.string());
  EXPECT_EQ(p.patterns, (std::vector<std::string>{"ep/moe", "collectives/all_reduce", "tp/*"}));
  try {
    NamePatterns::parse({}, (dir.path() / "nosuch.txt").string());
    ADD_FAILURE() << "a missing file accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read the problems file"), std::string::npos) << e.what();
  }
  const auto empty = dir.path() / "empty.txt";
  std::ofstream(empty) << "# nothing yet\n\n";
  EXPECT_THROW(NamePatterns::parse({}, empty.string()), UsageError);
}

TEST(NamePatterns, GlobsTakeStarAndQuestionMarkOnly) {
  EXPECT_TRUE(glob_match("collectives/*", "collectives/all_reduce"));
  EXPECT_TRUE(glob_match("*reduce*", "collectives/reduce_scatter"));
  EXPECT_TRUE(glob_match("a?c", "abc"));
  EXPECT_FALSE(glob_match("a?c", "ac"));
  EXPECT_FALSE(glob_match("tp/*", "collectives/all_reduce"));
}

}  // namespace
}  // namespace mgk
