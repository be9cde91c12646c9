#include "llm/config.h"

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/env.h"
#include "common/error.h"
#include "common/format.h"

namespace mgk::llm {
namespace {

using nlohmann::json;

// Reading one JSON object of the config with its dotted location for error messages.
class Reader {
 public:
  Reader(const json& j, std::string where, std::string origin)
      : j_(j), where_(std::move(where)), origin_(std::move(origin)) {
    if (!j_.is_object()) fail("must be a JSON object");
  }

  // Every key of the object must be one of `known`.
  void only(std::initializer_list<const char*> known) const {
    std::set<std::string> names(known.begin(), known.end());
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (names.count(it.key())) continue;
      throw UsageError(origin_ + ": unknown key '" + it.key() + "' in " + where_ +
                       " (valid: " + join(names) + ")");
    }
  }

  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  const json& raw(const char* key) const { return j_.at(key); }

  std::string string(const char* key) const {
    const json& v = j_.at(key);
    if (!v.is_string()) fail_key(key, "must be a string");
    return v.get<std::string>();
  }
  double number(const char* key, double min) const {
    const json& v = j_.at(key);
    if (!v.is_number()) fail_key(key, "must be a number");
    double d = v.get<double>();
    if (d < min) fail_key(key, "must be at least " + std::to_string(min));
    return d;
  }
  bool boolean(const char* key) const {
    const json& v = j_.at(key);
    if (!v.is_boolean()) fail_key(key, "must be true or false");
    return v.get<bool>();
  }
  Reader object(const char* key) const { return Reader(j_.at(key), where_ + "." + key, origin_); }
  const json& self() const { return j_; }
  const std::string& where() const { return where_; }
  const std::string& origin() const { return origin_; }

  [[noreturn]] void fail(const std::string& what) const {
    throw UsageError(origin_ + ": " + where_ + " " + what);
  }
  [[noreturn]] void fail_key(const char* key, const std::string& what) const {
    throw UsageError(origin_ + ": " + where_ + "." + key + " " + what);
  }

 private:
  const json& j_;
  std::string where_;
  std::string origin_;
};

void read_endpoint(const Reader& r, const std::string& name, Config& config) {
  r.only({"kind", "base_url", "base_url_env", "api_key_env", "api_key_required", "headers",
          "max_tokens_field"});
  auto existing = config.endpoints.find(name);
  bool is_new = existing == config.endpoints.end();
  if (is_new && (!r.has("kind") || !r.has("base_url")))
    r.fail("is a new endpoint and needs both \"kind\" (openai|anthropic) and \"base_url\"");
  Endpoint e = is_new ? Endpoint{} : existing->second;
  e.name = name;
  if (is_new) {
    e.base_url_env = default_base_url_env(name);
    e.api_key_env = "";
    e.api_key_required = false;
  }
  if (r.has("kind")) {
    std::string kind = r.string("kind");
    if (kind == "openai") e.kind = ApiKind::kOpenAI;
    else if (kind == "anthropic") e.kind = ApiKind::kAnthropic;
    else r.fail_key("kind", "must be \"openai\" or \"anthropic\", not \"" + kind + "\"");
  }
  if (r.has("base_url")) e.base_url = r.string("base_url");
  if (r.has("base_url_env")) e.base_url_env = r.string("base_url_env");
  if (r.self().contains("api_key_env")) {
    if (r.raw("api_key_env").is_null()) {  // null: this endpoint takes no key
      e.api_key_env.clear();
      e.api_key_required = false;
    } else {
      e.api_key_env = r.string("api_key_env");
      if (is_new) e.api_key_required = !e.api_key_env.empty();
    }
  }
  if (r.has("api_key_required")) e.api_key_required = r.boolean("api_key_required");
  if (e.api_key_required && e.api_key_env.empty())
    r.fail("requires an API key but names no \"api_key_env\" to read it from");
  if (r.has("headers")) {
    Reader h = r.object("headers");
    for (auto it = h.self().begin(); it != h.self().end(); ++it) {
      if (!it.value().is_string()) h.fail_key(it.key().c_str(), "must be a string");
      e.headers[it.key()] = it.value().get<std::string>();
    }
  }
  if (r.has("max_tokens_field")) {
    e.max_tokens_field = r.string("max_tokens_field");
    if (e.max_tokens_field != "max_tokens" && e.max_tokens_field != "max_completion_tokens")
      r.fail_key("max_tokens_field", "must be \"max_tokens\" or \"max_completion_tokens\"");
  }
  config.endpoints[name] = std::move(e);
}

void read_price(const Reader& r, const std::string& model, Config& config) {
  r.only({"input", "cached_input", "output", "cache_write"});
  if (!r.has("input") || !r.has("output")) r.fail("needs at least \"input\" and \"output\"");
  Price p;
  p.input = r.number("input", 0);
  p.output = r.number("output", 0);
  // Without a cached rate, cached tokens cost what other input tokens cost.
  p.cached_input = r.has("cached_input") ? r.number("cached_input", 0) : p.input;
  if (r.has("cache_write")) p.cache_write = r.number("cache_write", 0);
  config.prices[model] = p;
}

}  // namespace

const Endpoint& Config::endpoint(const std::string& prefix) const {
  auto it = endpoints.find(prefix);
  if (it != endpoints.end()) return it->second;
  throw UsageError("unknown model provider '" + prefix + "'; valid prefixes: " + join(prefixes()) +
                   " (add others under \"endpoints\" in the config file)");
}

namespace {

bool is_digits(const std::string& s, size_t from, size_t n) {
  if (from + n > s.size()) return false;
  for (size_t i = from; i < from + n; ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

// The name a model's family is looked up by (see Config::price).
std::string family_name(std::string name) {
  if (size_t slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
  for (char& c : name) c = c == '.' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto strip = [&name](size_t n) { name.erase(name.size() - n); };
  if (name.size() > 7 && name.ends_with("-latest")) strip(7);
  size_t n = name.size();
  if (n > 9 && (name[n - 9] == '-' || name[n - 9] == '@') && is_digits(name, n - 8, 8)) {
    strip(9);  // -20250929, @20250929
  } else if (n > 11 && name[n - 11] == '-' && is_digits(name, n - 10, 4) && name[n - 6] == '-' &&
             is_digits(name, n - 5, 2) && name[n - 3] == '-' && is_digits(name, n - 2, 2)) {
    strip(11);  // -2024-08-06
  }
  return name;
}

}  // namespace

std::optional<PriceMatch> Config::price(const std::string& prefix, const std::string& model) const {
  for (const std::string& entry : {prefix + ":" + model, model})
    if (auto it = prices.find(entry); it != prices.end()) return PriceMatch{it->second, entry, true};
  const std::string family = family_name(model);
  size_t best_length = 0;
  std::optional<PriceMatch> found;
  for (const auto& [entry, price] : prices) {
    std::string name = entry;
    if (size_t colon = entry.find(':'); colon != std::string::npos) {
      if (entry.compare(0, colon, prefix) != 0) continue;  // another endpoint's entry
      name = entry.substr(colon + 1);
    }
    std::string key = family_name(name);
    bool covers = family.compare(0, key.size(), key) == 0 &&
                  (family.size() == key.size() || family[key.size()] == '-');
    if (covers && key.size() > best_length) {
      best_length = key.size();
      found = PriceMatch{price, entry, false};
    }
  }
  return found;
}

std::vector<std::string> Config::prefixes() const {
  std::vector<std::string> names;
  for (const auto& [name, e] : endpoints) names.push_back(name);
  return names;
}

Config parse_config(const std::string& json_text, const std::string& origin) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw UsageError(origin + ": not valid JSON (" + e.what() + ")");
  }
  Config config = builtin_config();
  Reader top(j, "config", origin);
  top.only({"endpoints", "prices", "defaults"});
  if (top.has("endpoints")) {
    Reader endpoints = top.object("endpoints");
    for (auto it = endpoints.self().begin(); it != endpoints.self().end(); ++it) {
      if (it.key().empty() || it.key().find(':') != std::string::npos)
        endpoints.fail("has a name '" + it.key() + "' that is empty or contains ':'");
      read_endpoint(endpoints.object(it.key().c_str()), it.key(), config);
    }
  }
  if (top.has("prices")) {
    Reader prices = top.object("prices");
    for (auto it = prices.self().begin(); it != prices.self().end(); ++it)
      read_price(prices.object(it.key().c_str()), it.key(), config);
  }
  if (top.has("defaults")) {
    Reader d = top.object("defaults");
    d.only({"timeout_s", "connect_timeout_s", "max_retries", "max_reply_mib"});
    if (d.has("max_reply_mib"))
      config.max_reply_bytes = std::size_t(d.number("max_reply_mib", 1) * (1 << 20));
    if (d.has("timeout_s")) config.timeout_s = d.number("timeout_s", 0.001);
    if (d.has("connect_timeout_s")) config.connect_timeout_s = d.number("connect_timeout_s", 0.001);
    if (d.has("max_retries")) {
      const json& v = d.raw("max_retries");
      if (!v.is_number_integer() || v.get<int>() < 0 || v.get<int>() > 100)
        d.fail_key("max_retries", "must be a whole number from 0 to 100");
      config.max_retries = v.get<int>();
    }
  }
  return config;
}

Config load_config_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read config file " + path.string() + "; check the path");
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path.string());
}

std::filesystem::path default_config_path() {
  if (auto explicit_path = env("MGK_CONFIG")) return *explicit_path;
  if (auto xdg = env("XDG_CONFIG_HOME")) return std::filesystem::path(*xdg) / "mgk/config.json";
  if (auto home = env("HOME")) return std::filesystem::path(*home) / ".config/mgk/config.json";
  return {};
}

Config load_config() {
  if (auto explicit_path = env("MGK_CONFIG")) {
    if (!std::filesystem::exists(*explicit_path))
      throw UsageError("$MGK_CONFIG names " + *explicit_path +
                       ", which does not exist; fix or unset it");
    return load_config_file(*explicit_path);
  }
  std::filesystem::path path = default_config_path();
  if (path.empty() || !std::filesystem::exists(path)) return builtin_config();
  return load_config_file(path);
}

}  // namespace mgk::llm
