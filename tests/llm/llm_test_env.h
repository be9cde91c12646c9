// What the llm tests share: environment variables set for one test, a sleep that records
// instead of waiting, and a config whose OpenAI and Anthropic endpoints are the scripted
// server on loopback.
#pragma once
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "llm/config.h"
#include "support/scripted_server.h"

namespace mgk::llm::test {

// Sets (or unsets, with nullopt) an environment variable until the end of the scope.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value) ::setenv(name_.c_str(), value->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

inline constexpr const char* kOpenAIKey = "sk-test-0123456789abcdef-SECRET";
inline constexpr const char* kAnthropicKey = "sk-ant-test-fedcba9876543210-SECRET";

// The built-in config pointed at `server`, with short timeouts and waits recorded into
// `waits` instead of slept.
inline Config config_for(const mgk::test::ScriptedServer& server, std::vector<double>& waits,
                         double timeout_s = 5) {
  Config config = builtin_config();
  config.endpoints["openai"].base_url = server.url() + "/v1";
  config.endpoints["anthropic"].base_url = server.url();
  config.endpoints["vllm"].base_url = server.url() + "/v1";
  for (auto& [name, endpoint] : config.endpoints) endpoint.base_url_env.clear();
  config.timeout_s = timeout_s;
  config.connect_timeout_s = 2;
  config.sleep = [&waits](double seconds) { waits.push_back(seconds); };
  return config;
}

}  // namespace mgk::llm::test
