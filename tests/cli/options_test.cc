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

TEST(Options, GpusAloneSetTheWorldATypedWorldMustAgree) {
  EXPECT_EQ(world_from(2, false, {}), 2);
  EXPECT_EQ(world_from(2, false, {0, 1, 2, 3}), 4);
  EXPECT_EQ(world_from(4, true, {0, 1, 2, 3}), 4);
  EXPECT_EQ(world_from(3, true, {0, 0, 0}), 3);  // ranks sharing GPU 0
  EXPECT_EQ(world_from(8, true, {}), 8);
  try {
    world_from(3, true, {0, 1});
    ADD_FAILURE() << "--gpus 0,1 --world 3 accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).find("--world 3 does not match --gpus, which names 2 GPU(s)"), 0u)
        << e.what();
  }
}

TEST(Options, NumbersMustBeFiniteAndInRange) {
  CLI::App app;
  double timeout = 20;
  int iterations = 100;
  app.add_option("--timeout", timeout)->check(above(0));
  app.add_option("--iterations", iterations)->check(at_least(1));
  auto parse = [&](std::vector<std::string> args) {
    std::vector<std::string> argv(args.rbegin(), args.rend());  // CLI11 parses a reversed vector
    app.parse(argv);
  };
  for (const char* bad : {"-5", "0", "nan", "inf", "-inf", "5x", ""}) {
    SCOPED_TRACE(bad);
    try {
      parse({"--timeout", bad});
      ADD_FAILURE() << "accepted";
    } catch (const CLI::ValidationError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("--timeout: must be a number above 0, not '") + bad + "'");
    }
  }
  EXPECT_THROW(parse({"--iterations", "-3"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--iterations", "0"}), CLI::ValidationError);
  parse({"--timeout", "2.5", "--iterations", "1"});
  EXPECT_EQ(timeout, 2.5);
  EXPECT_EQ(iterations, 1);
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
