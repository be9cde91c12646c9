// The Provider behind every spec: one endpoint (OpenAI chat completions or Anthropic
// messages), one model, one key. make_provider() resolves those; this class sends.
#pragma once
#include <optional>
#include <string>

#include "llm/config.h"
#include "llm/provider.h"
#include "llm/retry.h"

namespace mgk::llm {

class HttpProvider : public Provider {
 public:
  // `base_url` and `api_key` already resolved from the environment; `api_key` may be ""
  // for endpoints that take none. Timeouts, retries, sleep and the price come from `config`.
  HttpProvider(Endpoint endpoint, std::string model, std::string base_url, std::string api_key,
               const Config& config);

  Reply complete(const Request& request) override;
  std::string name() const override { return endpoint_.name + ":" + model_; }
  std::optional<PriceMatch> price() const override { return price_; }

 private:
  Endpoint endpoint_;
  std::string model_;
  std::string url_;
  std::string api_key_;
  double timeout_s_;
  double connect_timeout_s_;
  RetryPolicy retry_;
  SleepFn sleep_;
  std::size_t max_reply_bytes_;
  std::optional<PriceMatch> price_;
};

}  // namespace mgk::llm
