#include "support/mgk_cli.h"

#include <cstdlib>
#include <stdexcept>

#include <stdlib.h>
#include <iostream>
#include <filesystem>

#include "process/run.h"
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

namespace {

// A store of this test process's own, so that no test reads or migrates the user's store
// (~/.local/share/mgk/mgk.db) or another test's: ctest runs each test in its own process, in
// parallel. A CI run once failed because another mgk had left a newer schema there.
struct OwnStore {
  std::filesystem::path dir;
  OwnStore() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "mgk-test-store-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    dir = tmpl;
  }
  ~OwnStore() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

std::string own_store() {
  static const OwnStore store;
  return (store.dir / "mgk.db").string();
}

bool names_a_store(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  if (env.count("MGK_DB") || env.count("XDG_DATA_HOME") || env.count("HOME")) return true;
  for (const auto& a : args)
    if (a == "--db" || a.rfind("--db=", 0) == 0) return true;
  return false;
}

}  // namespace

CliResult run_mgk(const std::vector<std::string>& args, const std::map<std::string, std::string>& env_in,
                  int timeout_s) {
  CliResult r;
  std::map<std::string, std::string> env = env_in;
  if (!names_a_store(args, env)) env["MGK_DB"] = own_store();
  if (!std::filesystem::exists(mgk_binary())) {
    ADD_FAILURE() << "the mgk binary is missing: " << mgk_binary() << " (build it first)";
    return r;
  }
  std::vector<std::string> argv = {mgk_binary().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  process::ProcessResult p = process::run_tool(argv, std::chrono::seconds(timeout_s), {}, env);
  r.exit_code = p.exit_code;
  r.output = p.output;
  r.seconds = p.wall_seconds;
  return r;
}

const GpuProbe& probe_gpus() {
  static const GpuProbe probe = [] {
    GpuProbe g;
    const char* override_path = std::getenv("MGK_HARNESS");
    const std::filesystem::path harness = override_path && *override_path ? override_path : build_dir() / "mgk-harness";
    if (!std::filesystem::exists(harness)) {
      g.why = "the harness binary is missing: " + harness.string();
      return g;
    }
    process::ProcessResult p;
    try {
      p = process::run_tool({harness.string(), "probe"}, std::chrono::seconds(60));
    } catch (const std::exception& e) {
      g.why = std::string("mgk-harness probe could not start: ") + e.what();
      return g;
    }
    if (p.exit_code != 0) {
      g.why = "mgk-harness probe " + p.status_line(60) + ": " + p.output.substr(0, 400);
      return g;
    }
    try {
      auto j = nlohmann::json::parse(p.output.substr(p.output.find('{')));
      g.count = int(j.at("gpus").size());
      if (g.count > 0) g.state = GpuProbe::State::kGpus;
      else if (j.contains("no_gpu")) g.state = GpuProbe::State::kNoGpu, g.why = j["no_gpu"].get<std::string>();
      else g.why = "the probe listed no GPU without saying why: " + p.output.substr(0, 200);
    } catch (const std::exception& e) {
      g.why = "mgk-harness probe printed no usable JSON (" + std::string(e.what()) + "): " + p.output.substr(0, 200);
    }
    return g;
  }();
  return probe;
}

bool gpus_available(int* count) {
  const GpuProbe& p = probe_gpus();
  if (p.state == GpuProbe::State::kBroken) ADD_FAILURE() << "the GPU probe is broken: " << p.why;
  if (count) *count = p.count;
  return p.state == GpuProbe::State::kGpus;
}

int test_world(bool* explicit_world) {
  const char* w = std::getenv("MGK_TEST_WORLD");
  if (explicit_world) *explicit_world = w && *w;
  return w && *w ? std::atoi(w) : 2;
}

void expect_verdict(const CliResult& r, const std::string& verdict, const std::string& failure_kind,
                    const std::string& failure_part) {
  auto j = r.json();
  ASSERT_FALSE(j.is_null()) << r.output;
  EXPECT_EQ(j.value("verdict", ""), verdict) << r.output;
  if (failure_kind.empty() && failure_part.empty()) return;
  ASSERT_TRUE(j.contains("sizes") && !j["sizes"].empty()) << "no size results: " << r.output;
  const auto& last = j["sizes"].back();
  if (!failure_kind.empty()) EXPECT_EQ(last.value("failure_kind", ""), failure_kind) << r.output;
  if (!failure_part.empty())
    EXPECT_NE(last.value("failure", "").find(failure_part), std::string::npos)
        << "expected '" << failure_part << "' in the failure: " << r.output;
}

void print_verdict(const std::string& name, const CliResult& r) {
  auto j = r.json();
  std::string why = j.is_null() ? r.output.substr(0, 200) : j.value("message", "");
  if (!j.is_null() && j.contains("sizes") && !j["sizes"].empty() && !j["sizes"].back().value("failure", "").empty())
    why = "at size " + j["sizes"].back().value("size", "") + ": " + j["sizes"].back().value("failure", "");
  std::cout << "rejected: " << name << ": " << (j.is_null() ? "no JSON" : j.value("verdict", "?")) << ": "
            << why.substr(0, 240) << std::endl;
}

void expect_message(const CliResult& r, const std::string& part) {
  auto j = r.json();
  ASSERT_FALSE(j.is_null()) << r.output;
  EXPECT_NE(j.value("message", "").find(part), std::string::npos) << "expected '" << part << "' in the message: " << r.output;
}

}  // namespace mgk::test
