// CLI11's own errors, reworded into mgk's one line: what is wrong and what to do.
#include "cli/parse_errors.h"

#include <gtest/gtest.h>

#include "support/mgk_cli.h"

namespace mgk::cli {
namespace {

TEST(ParseErrors, CliElevensTextsBecomeOneLineSayingWhatToDo) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"--gpus: At Most 1 required but received 2", "eval",
       "--gpus takes one value, not 2 (a list is one value, comma-separated: 0,1); 'mgk eval --help' lists its options"},
      {"--into: 1 required TEXT missing", "merge", "--into needs a value; 'mgk merge --help' lists its options"},
      {"Expected exactly 1 arguments to --model, got 0", "bench",
       "--model needs a value, got 0; 'mgk bench --help' lists its options"},
      {"The following argument was not expected: 2", "show",
       "unexpected 2 for 'mgk show'; 'mgk show --help' lists its options"},
      {"The following arguments were not expected: --bogus x", "", "unexpected --bogus x; 'mgk --help' lists the commands"},
      {"--into is required", "merge", "--into is required; 'mgk merge --help' lists its options"},
      {"--format: pdf not in {table,md,json,csv,html}", "report", "--format: 'pdf' is not one of table,md,json,csv,html"},
      {"Could not convert: --samples = two", "bench",
       "--samples: 'two' is not a value it takes (a number? a name?); 'mgk bench --help' lists its options"},
  };
  for (const auto& [cli11, command, mgk] : cases) EXPECT_EQ(reword_parse_error(cli11, command), mgk) << cli11;
  EXPECT_EQ(reword_parse_error("--max-tokens: must be a number of at least 1, not '0'", "bench"),
            "--max-tokens: must be a number of at least 1, not '0'")
      << "mgk's own checks pass through";
  EXPECT_NE(reword_parse_error("A subcommand is required", "").find("give a command: doctor, problems"),
            std::string::npos);
}

TEST(ParseErrors, TheBinaryPrintsOneLine) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"show", "1", "2"}, std::vector<std::string>{"merge", "a.db", "--into"},
        std::vector<std::string>{"bench", "--samples", "two"}, std::vector<std::string>{}}) {
    test::CliResult r = test::run_mgk(args);
    EXPECT_EQ(r.exit_code, 64) << r.output;
    EXPECT_EQ(r.output.rfind("mgk: error: ", 0), 0u) << r.output;
    EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << "one line: " << r.output;
    EXPECT_EQ(r.output.find("required but received"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("not expected"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace mgk::cli
