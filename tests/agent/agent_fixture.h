// What the agent tests share: a scripted judge (CI has no GPU), verdicts to script, a real
// provider pointed at the scripted HTTP server, a real store in a temporary directory, and
// the real prompts.
#pragma once
#include <atomic>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "agent/agent.h"
#include "agent/judge.h"
#include "agent/prompt_library.h"
#include "common/env.h"
#include "llm/config.h"
#include "llm/provider.h"
#include "store/store.h"
#include "support/scripted_server.h"
#include "support/test_paths.h"
#include "support/verdicts.h"

namespace mgk::agent::testing {

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Verdicts as the evaluator would return them.
inline results::EvalResult compile_error_result(const std::string& log) {
  results::EvalResult r;
  r.verdict = results::Verdict::kCompileError;
  r.message = "nvcc failed";
  r.compile_log = log;
  return r;
}

inline results::EvalResult mismatch_result() {
  results::EvalResult r;
  r.verdict = results::Verdict::kIncorrect;
  r.message = "output y differs from the oracle on rank 1";
  results::SizeResult s;
  s.size = "small";
  s.failure = "y mismatched";
  s.mismatch = wire::Mismatch{"y", 1, "[17]", 17, 0.5, 1.25, 0.02, 12, 524288};
  r.sizes.push_back(s);
  return r;
}

// Correct on two sizes, with the given speedups.
using test::correct_result;

// Answers each judge() with the next scripted verdict and remembers what it judged. A
// scripted step may be a function (to compile with real nvcc, or to press Ctrl-C).
class ScriptedJudge : public Judge {
 public:
  using Step = std::function<results::EvalResult(const std::filesystem::path&)>;
  void push(results::EvalResult r) {
    steps_.push_back([r](const std::filesystem::path&) { return r; });
  }
  void push(Step s) { steps_.push_back(std::move(s)); }

  results::EvalResult judge(const std::filesystem::path& kernel_file) override {
    judged_files.push_back(kernel_file);
    judged_sources.push_back(read_file(kernel_file));
    if (steps_.empty()) {
      ADD_FAILURE() << "the judge was asked more often than scripted";
      return compile_error_result("no scripted verdict");
    }
    Step s = std::move(steps_.front());
    steps_.pop_front();
    results::EvalResult r = s(kernel_file);
    r.problem = "collectives/all_reduce";
    r.world_size = 2;
    return r;
  }
  size_t unused() const { return steps_.size(); }

  std::vector<std::filesystem::path> judged_files;
  std::vector<std::string> judged_sources;

 private:
  std::deque<Step> steps_;
};

// Sets an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

inline constexpr const char* kOpenAIKey = "sk-test-openai-secret-7f3a";
inline constexpr const char* kAnthropicKey = "sk-ant-test-secret-91c2";

// Dollars per million tokens for the test models, so costs are known exactly.
inline llm::Price test_price() { return llm::Price{2.0, 0.5, 8.0, 2.5}; }

class AgentTest : public ::testing::Test {
 protected:
  AgentTest()
      : home_env_("MGK_HOME", home_.path().string()),
        openai_key_("OPENAI_API_KEY", kOpenAIKey),
        anthropic_key_("ANTHROPIC_API_KEY", kAnthropicKey),
        store_(store::Store::open(home_.path() / "mgk.db")),
        prompts_(PromptLibrary::load(root_dir() / "prompts")) {
    ::unsetenv("OPENAI_BASE_URL");
    ::unsetenv("ANTHROPIC_BASE_URL");
  }

  // "openai:gpt-test" or "anthropic:claude-test", served by server_.
  std::unique_ptr<llm::Provider> provider(const std::string& spec) {
    llm::Config c = llm::builtin_config();
    c.endpoints.at("openai").base_url = server_.url() + "/v1";
    c.endpoints.at("anthropic").base_url = server_.url();
    c.prices["gpt-test"] = test_price();
    c.prices["claude-test"] = test_price();
    c.sleep = [](double) {};
    return llm::make_provider(spec, c);
  }

  AgentSetup setup(Mode mode, int turns) {
    AgentSetup s;
    s.problem = "collectives/all_reduce";
    s.mode = mode;
    s.world_size = 2;
    s.limits.turns = turns;
    s.limits.max_cost_usd = 100;
    s.sampling.max_tokens = 4096;
    s.prompt = {"SYSTEM PROMPT for the test", "PROBLEM PROMPT: sum x over ranks"};
    s.command_timeout_s = 20;
    return s;
  }

  Agent make_agent(AgentSetup s, llm::Provider& p) {
    AgentDeps d{&p, &judge_, &store_, &prompts_, &interrupt_};
    return Agent(std::move(s), d);
  }

  int64_t new_run() { return store_.begin_run({"generate", "test", nlohmann::json::object()}); }

  // A script that was not played to its end is a test that did not go where it meant to.
  void TearDown() override {
    EXPECT_EQ(judge_.unused(), 0u) << "scripted verdicts were left unused";
    EXPECT_EQ(server_.unused_responses(), 0u) << "scripted replies were left unused";
  }

  // The sandbox an attempt of this store runs in.
  std::filesystem::path sandbox_of(int64_t attempt_id) {
    return home_.path() / "sandboxes" /
           sandbox_name(attempt_id, store_.run(store_.attempt(attempt_id)->run_id)->uuid);
  }

  test::TempDir home_{"mgk-agent"};
  ScopedEnv home_env_, openai_key_, anthropic_key_;
  test::ScriptedServer server_;
  store::Store store_;
  PromptLibrary prompts_;
  ScriptedJudge judge_;
  std::atomic<bool> interrupt_{false};
};

// Reply texts.
inline std::string kernel_reply(const std::string& code) {
  return "Design: pull the peer's input with 16-byte loads.\n\n```cuda\n" + code + "```\n";
}
inline std::string bash_reply(const std::string& command) {
  return "Next step.\n```bash\n" + command + "\n```\n";
}

}  // namespace mgk::agent::testing
