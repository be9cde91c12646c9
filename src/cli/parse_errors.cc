#include "cli/parse_errors.h"

#include <regex>
#include <vector>

namespace mgk::cli {

namespace {

std::string values(const std::string& n) { return n + (n == "1" ? " value" : " values"); }

}  // namespace

std::string reword_parse_error(const std::string& message, const std::string& command) {
  const std::string help = command.empty() ? "'mgk --help' lists the commands"
                                           : "'mgk " + command + " --help' lists its options";
  std::smatch m;
  auto is = [&](const char* pattern) { return std::regex_match(message, m, std::regex(pattern)); };
  if (is(R"((\S+): At Most (\d+) required but received (\d+))"))
    return m[1].str() + " takes " + (m[2] == "1" ? "one value" : "at most " + values(m[2])) + ", not " + m[3].str() +
           " (a list is one value, comma-separated: 0,1); " + help;
  if (is(R"((\S+): At least (\d+) required but received (\d+))") || is(R"((\S+): (\d+) required \S+ missing)"))
    return m[1].str() + " needs " + (m[2] == "1" ? "a value" : "at least " + values(m[2])) + "; " + help;
  if (is(R"(Expected (?:exactly|at least) (\d+) arguments? to (\S+), got (\d+))"))
    return m[2].str() + " needs " + (m[1] == "1" ? "a value" : values(m[1])) + ", got " + m[3].str() + "; " + help;
  if (is(R"(The following arguments? (?:was|were) not expected: (.*))"))
    return "unexpected " + m[1].str() + (command.empty() ? "" : " for 'mgk " + command + "'") + "; " + help;
  if (is(R"(A subcommand is required)"))
    return "give a command: doctor, problems, eval, tune, generate, bench, report, history, show, merge, calibrate "
           "('mgk COMMAND --help' for one)";
  if (is(R"((\S+) is required)")) return m[1].str() + " is required; " + help;
  if (is(R"((\S+) excludes (\S+))")) return m[1].str() + " and " + m[2].str() + " cannot be given together; " + help;
  if (is(R"((\S+) requires (\S+))")) return m[1].str() + " needs " + m[2].str() + " too; " + help;
  if (is(R"(The value (\S+) is not an allowed value for (\S+))") )
    return m[2].str() + ": '" + m[1].str() + "' is not an allowed value; " + help;
  if (is(R"(Could not convert: (\S+) = (.*))"))
    return m[1].str() + ": '" + m[2].str() + "' is not a value it takes (a number? a name?); " + help;
  if (is(R"((\S+): (\S+) not in \{(.*)\})")) return m[1].str() + ": '" + m[2].str() + "' is not one of " + m[3].str();
  return message;  // mgk's own validators already say what is wrong
}

}  // namespace mgk::cli
