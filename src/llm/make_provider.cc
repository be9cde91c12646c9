// From a spec string to a Provider: split the prefix, find the endpoint, read the base URL
// override and the API key from the environment.
#include "common/env.h"
#include "common/error.h"
#include "common/format.h"
#include "llm/http_provider.h"
#include "llm/provider.h"

namespace mgk::llm {
namespace {

std::string prefix_list(const Config& config) { return join(config.prefixes()); }

}  // namespace

std::unique_ptr<Provider> make_provider(const std::string& spec, const Config& config) {
  size_t colon = spec.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size())
    throw UsageError("model '" + spec + "' must be written <provider>:<model>, e.g. "
                     "openai:gpt-4o; providers: " + prefix_list(config));
  std::string prefix = spec.substr(0, colon);
  std::string model = spec.substr(colon + 1);
  const Endpoint& endpoint = config.endpoint(prefix);

  std::string base_url = endpoint.base_url;
  if (!endpoint.base_url_env.empty())
    if (auto overridden = env(endpoint.base_url_env.c_str())) base_url = *overridden;
  if (base_url.empty())
    throw UsageError("endpoint '" + prefix + "' has no base URL; set \"base_url\" for it in the "
                     "config file" + (endpoint.base_url_env.empty() ? std::string()
                                      : " or $" + endpoint.base_url_env));

  std::string key;
  if (!endpoint.api_key_env.empty())
    if (auto k = env(endpoint.api_key_env.c_str())) key = *k;
  if (key.empty() && endpoint.api_key_required)
    throw UsageError("$" + endpoint.api_key_env + " is not set; export your " + prefix +
                     " API key in it to use " + spec);
  return std::make_unique<HttpProvider>(endpoint, model, base_url, key, config);
}

const char* to_string(FinishReason finish) {
  switch (finish) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kContentFilter: return "content_filter";
    case FinishReason::kToolUse: return "tool_use";
    case FinishReason::kOther: return "other";
  }
  return "other";
}

}  // namespace mgk::llm
