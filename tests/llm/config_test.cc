// Config: presets, the JSON file layered over them, lookups, and make_provider's checks.
#include "llm/config.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/error.h"
#include "llm/provider.h"
#include "llm_test_env.h"
#include "support/scripted_server.h"
#include "support/test_paths.h"

namespace mgk::llm {
namespace {

using test::ScopedEnv;

std::string usage_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UsageError";
  return "";
}

TEST(Config, BuiltinsHaveThePresetsAndSdkDefaults) {
  Config c = builtin_config();
  EXPECT_EQ(c.prefixes(), (std::vector<std::string>{"anthropic", "deepseek", "ollama", "openai",
                                                     "openrouter", "sglang", "together", "vllm"}));
  EXPECT_EQ(c.endpoint("openai").api_key_env, "OPENAI_API_KEY");
  EXPECT_EQ(c.endpoint("openai").base_url_env, "OPENAI_BASE_URL");
  EXPECT_EQ(c.endpoint("anthropic").kind, ApiKind::kAnthropic);
  EXPECT_EQ(c.endpoint("anthropic").base_url_env, "ANTHROPIC_BASE_URL");
  EXPECT_EQ(c.endpoint("ollama").base_url, "http://localhost:11434/v1");
  EXPECT_EQ(c.endpoint("vllm").base_url, "http://localhost:8000/v1");
  EXPECT_FALSE(c.endpoint("vllm").api_key_required);
  EXPECT_TRUE(c.endpoint("together").api_key_required);
  EXPECT_EQ(c.timeout_s, 600);
  EXPECT_EQ(c.connect_timeout_s, 5);
  EXPECT_EQ(c.max_retries, 2);
  ASSERT_TRUE(c.price("openai", "gpt-4o"));
  EXPECT_EQ(c.price("openai", "gpt-4o")->price.output, 10.0);
  EXPECT_TRUE(c.price("openai", "gpt-4o")->exact);
  EXPECT_FALSE(c.price("vllm", "some-local-model"));
  EXPECT_EQ(c.max_reply_bytes, 64u << 20);
}

TEST(Config, FileOverridesFieldsAddsEndpointsAndPrices) {
  Config c = parse_config(R"({
    "endpoints": {
      "openai": {"base_url": "https://proxy.example/v1", "headers": {"X-Team": "kernels"}},
      "lab": {"kind": "anthropic", "base_url": "http://gpu7:9000", "api_key_env": "LAB_KEY"}
    },
    "prices": {"gpt-4o": {"input": 1, "output": 2},
               "lab:claude-x": {"input": 3, "cached_input": 0.5, "output": 4, "cache_write": 5}},
    "defaults": {"timeout_s": 120, "connect_timeout_s": 2.5, "max_retries": 5,
                 "max_reply_mib": 16}
  })", "test.json");
  EXPECT_EQ(c.endpoint("openai").base_url, "https://proxy.example/v1");
  EXPECT_EQ(c.endpoint("openai").api_key_env, "OPENAI_API_KEY");  // kept from the preset
  EXPECT_EQ(c.endpoint("openai").headers.at("X-Team"), "kernels");
  EXPECT_EQ(c.endpoint("lab").kind, ApiKind::kAnthropic);
  EXPECT_TRUE(c.endpoint("lab").api_key_required);
  EXPECT_EQ(c.endpoint("lab").base_url_env, "LAB_BASE_URL");
  EXPECT_EQ(c.price("openai", "gpt-4o")->price.input, 1);
  EXPECT_EQ(c.price("openai", "gpt-4o")->price.cached_input, 1);  // defaults to the input price
  EXPECT_EQ(c.price("lab", "claude-x")->price.cache_write, 5);
  EXPECT_FALSE(c.price("other", "claude-x"));  // the prefixed entry is only for lab
  EXPECT_EQ(c.max_reply_bytes, 16u << 20);
  EXPECT_EQ(c.timeout_s, 120);
  EXPECT_EQ(c.connect_timeout_s, 2.5);
  EXPECT_EQ(c.max_retries, 5);
  EXPECT_EQ(c.endpoint("vllm").base_url, "http://localhost:8000/v1");  // untouched presets stay
}

// Which table entry prices a model name, or "" for none.
std::string priced_as(const Config& c, const std::string& prefix, const std::string& model) {
  auto m = c.price(prefix, model);
  return m ? m->entry : "";
}

TEST(Config, DatedAndVendorQualifiedNamesArePricedByTheirFamily) {
  Config c = builtin_config();
  EXPECT_EQ(priced_as(c, "anthropic", "claude-sonnet-4-5-20250929"), "claude-sonnet-4-5");
  EXPECT_FALSE(c.price("anthropic", "claude-sonnet-4-5-20250929")->exact);
  EXPECT_EQ(c.price("anthropic", "claude-sonnet-4-5-20250929")->price.output, 15.0);
  EXPECT_EQ(priced_as(c, "anthropic", "claude-sonnet-4-20250514"), "claude-sonnet-4");
  EXPECT_EQ(priced_as(c, "anthropic", "claude-opus-4-1-20250805"), "claude-opus-4-1");
  EXPECT_EQ(priced_as(c, "anthropic", "claude-3-5-haiku-latest"), "claude-3-5-haiku");
  EXPECT_EQ(priced_as(c, "openrouter", "anthropic/claude-sonnet-4.5"), "claude-sonnet-4-5");
  EXPECT_EQ(priced_as(c, "openai", "gpt-4o-2024-08-06"), "gpt-4o");
  EXPECT_EQ(priced_as(c, "openai", "gpt-4o-mini-2024-07-18"), "gpt-4o-mini");  // the longest
  EXPECT_EQ(priced_as(c, "openai", "GPT-4.1-Mini"), "gpt-4.1-mini");
  EXPECT_EQ(priced_as(c, "openrouter", "openai/gpt-5"), "gpt-5");
  // A family ends at a '-': o3 does not price "o3x", gpt-4o does not price gpt-4.
  EXPECT_EQ(priced_as(c, "openai", "o3x"), "");
  EXPECT_EQ(priced_as(c, "openai", "gpt-4"), "");
  // Another endpoint's entry does not count: DeepSeek's own price is not OpenRouter's.
  EXPECT_EQ(priced_as(c, "openrouter", "deepseek/deepseek-chat"), "");
  EXPECT_EQ(priced_as(c, "deepseek", "deepseek-chat"), "deepseek:deepseek-chat");
  EXPECT_EQ(priced_as(c, "together", "meta-llama/Llama-3.3-70B-Instruct-Turbo"), "");
  EXPECT_EQ(priced_as(c, "vllm", "qwen"), "");
}

TEST(Config, TheConfigCanPriceAnyModelAndItsFamily) {
  Config c = parse_config(R"({"prices": {
      "together:meta-llama/Llama-3.3-70B-Instruct-Turbo": {"input": 0.88, "output": 0.88},
      "vllm:qwen3": {"input": 0, "output": 0}}})", "test.json");
  EXPECT_EQ(priced_as(c, "together", "meta-llama/Llama-3.3-70B-Instruct-Turbo"),
            "together:meta-llama/Llama-3.3-70B-Instruct-Turbo");
  EXPECT_EQ(c.price("together", "meta-llama/Llama-3.3-70B-Instruct-Turbo")->price.input, 0.88);
  EXPECT_EQ(priced_as(c, "vllm", "qwen3-32b"), "vllm:qwen3");  // free, and known to be
  EXPECT_EQ(priced_as(c, "sglang", "qwen3-32b"), "");
}

TEST(Config, NullKeyMakesAnEndpointKeyless) {
  Config c = parse_config(R"({"endpoints": {"together": {"api_key_env": null}}})", "t.json");
  EXPECT_EQ(c.endpoint("together").api_key_env, "");
  EXPECT_FALSE(c.endpoint("together").api_key_required);
}

TEST(Config, MistakesAreUsageErrorsThatSayWhere) {
  auto msg = [](const std::string& text) { return usage_error_of([&] { parse_config(text, "c.json"); }); };
  EXPECT_NE(msg("{not json").find("c.json: not valid JSON"), std::string::npos);
  EXPECT_NE(msg(R"({"endpoint": {}})").find("unknown key 'endpoint' in config"), std::string::npos);
  EXPECT_NE(msg(R"({"endpoints": {"x": {"kind": "openai"}}})").find("needs both"), std::string::npos);
  EXPECT_NE(msg(R"({"endpoints": {"x": {"kind": "grpc", "base_url": "u"}}})")
                .find("config.endpoints.x.kind must be \"openai\" or \"anthropic\""),
            std::string::npos);
  EXPECT_NE(msg(R"({"prices": {"m": {"input": "cheap", "output": 1}}})")
                .find("config.prices.m.input must be a number"),
            std::string::npos);
  EXPECT_NE(msg(R"({"defaults": {"max_retries": 1.5}})").find("whole number"), std::string::npos);
  EXPECT_NE(msg(R"({"defaults": {"timeout": 3}})").find("unknown key 'timeout'"), std::string::npos);
}

TEST(Config, LoadsFromMgkConfigAndTreatsAMissingDefaultFileAsBuiltins) {
  mgk::test::TempDir dir;
  auto path = dir.path() / "config.json";
  std::ofstream(path) << R"({"defaults": {"max_retries": 7}})";
  {
    ScopedEnv cfg("MGK_CONFIG", path.string());
    EXPECT_EQ(default_config_path(), path);
    EXPECT_EQ(load_config().max_retries, 7);
  }
  {
    ScopedEnv cfg("MGK_CONFIG", (dir.path() / "absent.json").string());
    EXPECT_NE(usage_error_of([] { load_config(); }).find("does not exist"), std::string::npos);
  }
  {
    ScopedEnv cfg("MGK_CONFIG", std::nullopt);
    ScopedEnv xdg("XDG_CONFIG_HOME", std::nullopt);
    ScopedEnv home("HOME", dir.path().string());  // no .config/mgk/config.json under it
    EXPECT_EQ(default_config_path(), dir.path() / ".config/mgk/config.json");
    EXPECT_EQ(load_config().max_retries, 2);
    std::filesystem::create_directories(dir.path() / ".config/mgk");
    std::ofstream(dir.path() / ".config/mgk/config.json") << R"({"defaults": {"max_retries": 4}})";
    EXPECT_EQ(load_config().max_retries, 4);
  }
}

TEST(MakeProvider, UnknownPrefixListsTheValidOnes) {
  std::string what = usage_error_of([] { make_provider("gemini:pro", builtin_config()); });
  EXPECT_NE(what.find("unknown model provider 'gemini'"), std::string::npos) << what;
  EXPECT_NE(what.find("anthropic, deepseek, ollama, openai, openrouter, sglang, together, vllm"),
            std::string::npos) << what;
}

TEST(MakeProvider, SpecWithoutPrefixOrModelIsRefused) {
  EXPECT_NE(usage_error_of([] { make_provider("gpt-4o", builtin_config()); })
                .find("must be written <provider>:<model>"),
            std::string::npos);
  EXPECT_NE(usage_error_of([] { make_provider("openai:", builtin_config()); })
                .find("must be written"),
            std::string::npos);
}

TEST(MakeProvider, MissingKeyNamesTheVariable) {
  ScopedEnv no_key("TOGETHER_API_KEY", std::nullopt);
  std::string what = usage_error_of([] { make_provider("together:meta-llama/x", builtin_config()); });
  EXPECT_EQ(what, "$TOGETHER_API_KEY is not set; export your together API key in it to use "
                  "together:meta-llama/x");
}

TEST(MakeProvider, KeylessLocalServerAndModelWithColons) {
  ScopedEnv no_key("OLLAMA_API_KEY", std::nullopt);
  auto p = make_provider("ollama:qwen2.5-coder:32b", builtin_config());
  EXPECT_EQ(p->name(), "ollama:qwen2.5-coder:32b");
}

TEST(MakeProvider, BaseUrlEnvironmentVariableRedirectsTheEndpoint) {
  mgk::test::ScriptedServer server(
      {mgk::test::ScriptedResponse::json(200, mgk::test::openai_chat_reply("redirected"))});
  ScopedEnv key("OPENAI_API_KEY", test::kOpenAIKey);
  ScopedEnv url("OPENAI_BASE_URL", server.url() + "/v1");
  Config config = builtin_config();  // base_url says api.openai.com; the variable wins
  Request request;
  request.messages = {{"user", "hi"}};
  EXPECT_EQ(make_provider("openai:gpt-4o", config)->complete(request).text, "redirected");
  EXPECT_EQ(server.requests().at(0).path, "/v1/chat/completions");
}

}  // namespace
}  // namespace mgk::llm
