// One blocking HTTPS POST through libcurl. Transport failures (refused, reset, dropped,
// timed out) come back as data, not exceptions, so the retry loop can decide about them.
#pragma once
#include <atomic>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace mgk::llm {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  double timeout_s = 600;         // whole exchange
  double connect_timeout_s = 5;
  std::size_t max_reply_bytes = 64u << 20;  // decompressed body; more is Failure::kTooLarge
  const std::atomic<bool>* cancel = nullptr;  // polled during the transfer; see http_post
};

struct HttpResponse {
  enum class Failure {
    kNone,
    kConnection,
    kTimeout,
    kTooLarge,  // the body passed max_reply_bytes; reading stopped there (never retried)
  };
  Failure failure = Failure::kNone;
  std::string failure_detail;  // curl's description when failure != kNone
  int status = 0;              // 0 when failure != kNone
  std::map<std::string, std::string> headers;  // names lower-cased; last value wins
  std::string body;

  // The header's value, or "" when absent; `name` in lower case.
  std::string header(const std::string& name) const;
};

// Sends the POST and waits for the whole reply. Thread-safe. Throws mgk::UsageError when
// the URL itself is unusable (malformed, unsupported scheme), mgk::Error if curl cannot
// be set up, and mgk::Interrupted within about a second of `cancel` turning true (curl polls it).
HttpResponse http_post(const HttpRequest& request);

}  // namespace mgk::llm
