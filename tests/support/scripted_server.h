// A real HTTP/1.1 server on 127.0.0.1 (ephemeral port) that answers from a script, for
// tests of code that calls model APIs. Each request takes the next scripted response in
// order: a status with headers and body (optionally after a delay), a dropped connection,
// or a hang that lasts until the client gives up. Every request is recorded (method, path,
// headers, body, body as JSON). When the script runs out the server answers 500 with
// "x-should-retry: false" and a message saying so, so the test fails loudly and fast, unless
// a responder is set: then it answers what the script does not, from the request itself
// (for concurrent clients, whose order of arrival is not fixed).
// Plain POSIX sockets; one thread per connection; Content-Length bodies only. Creating one
// adds 127.0.0.1 to $no_proxy/$NO_PROXY so that a proxy in the environment is bypassed.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace mgk::test {

struct ScriptedResponse {
  enum class Action {
    kRespond,  // send status, headers, body
    kDrop,     // read the request, then close the connection without a word
    kHang,     // read the request, then wait until the client closes (or the server stops)
  };
  using Headers = std::vector<std::pair<std::string, std::string>>;

  Action action = Action::kRespond;
  int status = 200;
  Headers headers;  // Content-Type defaults to application/json when not given
  std::string body;
  std::chrono::milliseconds delay{0};  // before answering; cut short if the client leaves

  static ScriptedResponse json(int status, const nlohmann::json& body, Headers headers = {});
  static ScriptedResponse text(int status, std::string body, Headers headers = {});
  static ScriptedResponse drop();
  static ScriptedResponse hang();

  ScriptedResponse& after(std::chrono::milliseconds wait) {
    delay = wait;
    return *this;
  }
  ScriptedResponse& with_header(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
    return *this;
  }
};

struct RecordedRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  nlohmann::json json;  // the body parsed; null when it is not JSON

  // The header's value or "" when absent; `name` in any case.
  std::string header(const std::string& name) const;
};

class ScriptedServer {
 public:
  explicit ScriptedServer(std::vector<ScriptedResponse> script = {});
  ~ScriptedServer();  // stops accepting, ends hangs and delays, joins every thread
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  void push(ScriptedResponse response);  // appends to the script
  using Responder = std::function<ScriptedResponse(const RecordedRequest&)>;
  // Answers every request the script does not (called on the connection's thread, so it
  // must be thread-safe; a pure function of the request is).
  void respond_with(Responder responder);
  int port() const { return port_; }
  std::string url() const;  // "http://127.0.0.1:<port>"

  std::vector<RecordedRequest> requests() const;  // in arrival order
  size_t request_count() const;
  size_t unused_responses() const;  // script entries not yet taken

 private:
  void accept_loop();
  void serve(int fd);
  bool wait_while_client_stays(int fd, std::chrono::milliseconds limit) const;

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::deque<ScriptedResponse> script_;
  Responder responder_;
  size_t script_taken_ = 0;
  std::vector<RecordedRequest> requests_;
  std::vector<std::thread> connections_;
  std::thread acceptor_;
};

// Token counts for the reply builders below, named as each vendor reports them.
struct ScriptedUsage {
  int64_t input = 0;           // OpenAI prompt_tokens (cached included); Anthropic input_tokens (uncached)
  int64_t output = 0;          // completion_tokens / output_tokens
  int64_t cached = 0;          // prompt_tokens_details.cached_tokens / cache_read_input_tokens
  int64_t cache_creation = 0;  // Anthropic cache_creation_input_tokens
  int64_t reasoning = 0;       // OpenAI completion_tokens_details.reasoning_tokens
};

// A chat.completion object with one choice.
nlohmann::json openai_chat_reply(const std::string& text, const ScriptedUsage& usage = {},
                                 const std::string& finish_reason = "stop",
                                 const std::string& model = "gpt-4o-2024-08-06");

// A message object with one text block.
nlohmann::json anthropic_message_reply(const std::string& text, const ScriptedUsage& usage = {},
                                       const std::string& stop_reason = "end_turn",
                                       const std::string& model = "claude-sonnet-4-5-20250929");

// Error bodies as each vendor sends them.
nlohmann::json openai_error(const std::string& type, const std::string& message,
                            const std::string& code = "");
nlohmann::json anthropic_error(const std::string& type, const std::string& message);

}  // namespace mgk::test
