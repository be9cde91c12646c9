// The exception every provider throws when a model call fails for good: an mgk::Error whose
// message is one line saying what happened and what to do, plus the facts a caller branches
// on (kind, HTTP status, the vendor's error type, how many tries were made).
#pragma once
#include <string>

#include "common/error.h"

namespace mgk::llm {

class ApiError : public Error {
 public:
  enum class Kind {
    kAuth,             // 401: key rejected or missing
    kPermission,       // 403
    kNotFound,         // 404: model or path unknown
    kBadRequest,       // 400/422 for any other reason
    kContextOverflow,  // the prompt does not fit the model's context window
    kQuotaExhausted,   // spend limit / credits exhausted (OpenAI insufficient_quota, 402)
    kRateLimited,      // 429 that persisted through the retries
    kOverloaded,       // Anthropic 529 / overloaded_error
    kServer,           // other 5xx, or an error object inside a 2xx reply
    kConnection,       // no HTTP exchange: refused, reset, dropped, DNS
    kTimeout,          // no complete reply within the timeout (or HTTP 408)
    kMalformedReply,   // a 2xx reply that is not JSON or lacks the expected fields
    kOther,            // any other status
  };

  ApiError(Kind kind, std::string message, int http_status, std::string vendor_type,
           int attempts)
      : Error(std::move(message)),
        kind_(kind),
        http_status_(http_status),
        vendor_type_(std::move(vendor_type)),
        attempts_(attempts) {}

  Kind kind() const { return kind_; }
  int http_status() const { return http_status_; }  // 0 when no HTTP reply came
  // The vendor's error code or type ("insufficient_quota", "overloaded_error"); may be "".
  const std::string& vendor_type() const { return vendor_type_; }
  int attempts() const { return attempts_; }  // HTTP requests sent in total
  bool retried() const { return attempts_ > 1; }

 private:
  Kind kind_;
  int http_status_;
  std::string vendor_type_;
  int attempts_;
};

const char* to_string(ApiError::Kind kind);

// What a message needs to know about the call, to say what to check. `secret` (the API key)
// is scrubbed from any text quoted from the server.
struct CallSite {
  std::string endpoint;  // "openai"
  std::string model;
  std::string url;       // full request URL
  std::string key_env;   // "OPENAI_API_KEY", or "" when the endpoint takes no key
  std::string secret;
  double timeout_s = 0;
  std::string host() const;  // "api.openai.com" or "127.0.0.1:8000"
};

// An HTTP error status with its body. `gave_up` says the status was retryable but the
// retries ran out (the message then says after how many tries).
ApiError http_error(const CallSite& site, int status, const std::string& body, int attempts,
                    bool gave_up);

// No HTTP reply: `timed_out` tells a timeout from a connection failure; `detail` is curl's.
ApiError transport_error(const CallSite& site, bool timed_out, const std::string& detail,
                         int attempts, bool gave_up);

// A reply whose body passed the size cap (Config::max_reply_bytes); `detail` says by how much.
ApiError reply_too_large(const CallSite& site, const std::string& detail, int attempts);

// A 2xx reply that could not be understood; `problem` says what is wrong with it.
ApiError malformed_reply(const CallSite& site, const std::string& problem,
                         const std::string& body, int status, int attempts);

// At most `limit` characters of `text` on one line, `secret` replaced by "***".
std::string excerpt(const std::string& text, const std::string& secret, size_t limit = 200);

}  // namespace mgk::llm

namespace mgk::llm {

// Thrown by the reply parsers when a 2xx body lacks what the API promises; the provider
// turns it into an ApiError of kind kMalformedReply quoting the body.
class ReplyShapeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace mgk::llm
