#include "cli/options.h"

#include <gtest/gtest.h>

namespace mgk::cli {
namespace {

TEST(Options, ListsSplitOnCommasAndSkipEmptyItems) {
  EXPECT_EQ(split_list("small,,large"), (std::vector<std::string>{"small", "large"}));
  EXPECT_TRUE(split_list("").empty());
  EXPECT_EQ(parse_int_list("0,1,3", "--gpus"), (std::vector<int>{0, 1, 3}));
}

TEST(Options, AGpuListMustBeNonNegativeIntegers) {
  for (const char* bad : {"0,x", "1.5", "-1", "0,1a"}) {
    SCOPED_TRACE(bad);
    try {
      parse_int_list(bad, "--gpus");
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--gpus expects a comma-separated list of GPU indices"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Options, GpusAloneSetTheWorldATypedWorldWins) {
  EXPECT_EQ(world_from(2, false, {}), 2);
  EXPECT_EQ(world_from(2, false, {0, 1, 2, 3}), 4);
  EXPECT_EQ(world_from(2, true, {0, 1, 2, 3}), 2);  // the evaluator then names the mismatch
  EXPECT_EQ(world_from(8, true, {}), 8);
}

TEST(Options, GroupOptionsRecordWhetherWorldWasTyped) {
  for (const auto& [args, given, world] : std::vector<std::tuple<std::vector<std::string>, bool, int>>{
           {{"--gpus", "0,1,2"}, false, 2}, {{"--world", "2", "--gpus", "0,1,2"}, true, 2}, {{"--world", "4"}, true, 4}}) {
    CLI::App app;
    int w = 2;
    bool typed = false;
    std::string gpus;
    add_group_options(&app, &w, &typed, &gpus);
    std::vector<std::string> argv(args.rbegin(), args.rend());  // CLI11 parses a reversed vector
    app.parse(argv);
    EXPECT_EQ(typed, given);
    EXPECT_EQ(w, world);
  }
}

// Ranks sharing a GPU can be checked (eval) but not timed (tune, generate).
TEST(Options, CommandsThatTimeRefuseAGpuNamedTwice) {
  EXPECT_NO_THROW(require_own_gpus({}, "tune"));
  EXPECT_NO_THROW(require_own_gpus({0, 1, 2}, "tune"));
  try {
    require_own_gpus({0, 1, 0}, "generate");
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("mgk generate times kernels"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("mgk eval --gpus"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mgk::cli
