#include "support/mgk_cli.h"

#include <gtest/gtest.h>

#include "common/subprocess.h"
#include "support/test_paths.h"

namespace mgk::test {

nlohmann::json CliResult::json() const {
  auto start = output.find("{\n");
  if (start == std::string::npos) return nullptr;
  // --json prints one pretty document; it ends at the first line that is exactly "}".
  auto end = output.find("\n}", start);
  if (end == std::string::npos) return nullptr;
  try {
    return nlohmann::json::parse(output.substr(start, end + 2 - start));
  } catch (const std::exception&) {
    return nullptr;
  }
}

CliResult run_mgk(const std::vector<std::string>& args, const std::map<std::string, std::string>& env, int timeout_s) {
  std::vector<std::string> argv = {mgk_binary().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult p = run_process(argv, std::chrono::seconds(timeout_s), {}, env);
  CliResult r;
  r.exit_code = p.exit_code;
  r.output = p.output;
  r.seconds = p.seconds;
  return r;
}

bool gpus_available(int* count) {
  ProcessResult p;
  try {
    p = run_process({(build_dir() / "mgk-harness").string(), "probe"}, std::chrono::seconds(60));
  } catch (const std::exception&) {
    return false;
  }
  if (p.exit_code != 0) return false;
  try {
    auto j = nlohmann::json::parse(p.output.substr(p.output.find('{')));
    int n = int(j.value("gpus", nlohmann::json::array()).size());
    if (count) *count = n;
    return n > 0;
  } catch (const std::exception&) {
    return false;
  }
}

void expect_verdict(const CliResult& r, const std::string& verdict, const std::string& reason_part) {
  auto j = r.json();
  ASSERT_FALSE(j.is_null()) << r.output;
  EXPECT_EQ(j["verdict"], verdict) << r.output;
  if (!reason_part.empty()) {
    std::string all = j.dump();
    EXPECT_NE(all.find(reason_part), std::string::npos) << "expected '" << reason_part << "' in: " << r.output;
  }
}

}  // namespace mgk::test
