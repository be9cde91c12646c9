#include "support/scripted_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace mgk::test {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollSlice = std::chrono::milliseconds(20);
constexpr auto kRequestReadLimit = std::chrono::seconds(10);
constexpr auto kHangLimit = std::chrono::minutes(10);

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 402: return "Payment Required";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 529: return "Overloaded";
    default: return "Status";
  }
}

void send_all(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the client left; nothing more to say
    sent += static_cast<size_t>(n);
  }
}

std::string render(const ScriptedResponse& r) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason_phrase(r.status) + "\r\n";
  bool has_type = false;
  for (const auto& [name, value] : r.headers) {
    has_type = has_type || lower(name) == "content-type";
    out += name + ": " + value + "\r\n";
  }
  if (!has_type) out += "Content-Type: application/json\r\n";
  out += "Content-Length: " + std::to_string(r.body.size()) + "\r\nConnection: close\r\n\r\n";
  return out + r.body;
}

// A proxy configured in the environment must not intercept requests meant for loopback.
void bypass_proxies_for_loopback() {
  for (const char* name : {"no_proxy", "NO_PROXY"}) {
    const char* current = std::getenv(name);
    std::string list = current ? current : "";
    if (list.find("127.0.0.1") != std::string::npos) continue;
    list += list.empty() ? "127.0.0.1,localhost" : ",127.0.0.1,localhost";
    ::setenv(name, list.c_str(), 1);
  }
}

}  // namespace

ScriptedResponse ScriptedResponse::json(int status, const nlohmann::json& body, Headers headers) {
  ScriptedResponse r;
  r.status = status;
  r.body = body.dump();
  r.headers = std::move(headers);
  return r;
}

ScriptedResponse ScriptedResponse::text(int status, std::string body, Headers headers) {
  ScriptedResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers = std::move(headers);
  if (std::none_of(r.headers.begin(), r.headers.end(),
                   [](const auto& h) { return lower(h.first) == "content-type"; }))
    r.headers.emplace_back("Content-Type", "text/plain");
  return r;
}

ScriptedResponse ScriptedResponse::drop() {
  ScriptedResponse r;
  r.action = Action::kDrop;
  return r;
}

ScriptedResponse ScriptedResponse::hang() {
  ScriptedResponse r;
  r.action = Action::kHang;
  return r;
}

std::string RecordedRequest::header(const std::string& name) const {
  auto it = headers.find(lower(name));
  return it == headers.end() ? "" : it->second;
}

ScriptedServer::ScriptedServer(std::vector<ScriptedResponse> script)
    : script_(script.begin(), script.end()) {
  bypass_proxies_for_loopback();
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 64) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::string why = std::strerror(errno);
    ::close(listen_fd_);
    throw std::runtime_error("scripted server cannot listen on 127.0.0.1: " + why);
  }
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

ScriptedServer::~ScriptedServer() {
  stopping_ = true;
  acceptor_.join();
  ::close(listen_fd_);
  for (auto& t : connections_) t.join();  // the acceptor is gone: no more are added
}

void ScriptedServer::push(ScriptedResponse response) {
  std::lock_guard<std::mutex> lock(mu_);
  script_.push_back(std::move(response));
}

void ScriptedServer::respond_with(Responder responder) {
  std::lock_guard<std::mutex> lock(mu_);
  responder_ = std::move(responder);
}

std::string ScriptedServer::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

std::vector<RecordedRequest> ScriptedServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

size_t ScriptedServer::request_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_.size();
}

size_t ScriptedServer::unused_responses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return script_.size();
}

void ScriptedServer::accept_loop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(kPollSlice.count())) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> lock(mu_);
    connections_.emplace_back([this, fd] {
      serve(fd);
      ::close(fd);
    });
  }
}

// Waits up to `limit` while the client keeps the connection open; false once it closes it
// (or the server stops). Bytes the client sends meanwhile are read and dropped.
bool ScriptedServer::wait_while_client_stays(int fd, std::chrono::milliseconds limit) const {
  auto deadline = Clock::now() + limit;
  while (!stopping_) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return true;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min(left, kPollSlice).count())) <= 0) continue;
    char scratch[512];
    ssize_t n = ::recv(fd, scratch, sizeof scratch, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return false;
  }
  return false;
}

void ScriptedServer::serve(int fd) {
  // Read the head, then the body it announces.
  std::string data;
  auto deadline = Clock::now() + kRequestReadLimit;
  auto read_some = [&]() -> bool {
    while (!stopping_ && Clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(kPollSlice.count())) <= 0) continue;
      char chunk[16384];
      ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return false;
      data.append(chunk, static_cast<size_t>(n));
      return true;
    }
    return false;
  };
  size_t head_end;
  while ((head_end = data.find("\r\n\r\n")) == std::string::npos)
    if (!read_some()) return;  // the client left before sending a request

  RecordedRequest request;
  std::string head = data.substr(0, head_end);
  size_t line_end = head.find("\r\n");
  std::string request_line = head.substr(0, line_end);
  size_t sp1 = request_line.find(' '), sp2 = request_line.rfind(' ');
  request.method = request_line.substr(0, sp1);
  request.path = sp1 == sp2 ? "" : request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  for (size_t at = line_end; at != std::string::npos && at < head.size();) {
    size_t next = head.find("\r\n", at + 2);
    std::string line = head.substr(at + 2, next == std::string::npos ? std::string::npos
                                                                      : next - at - 2);
    size_t colon = line.find(':');
    if (colon != std::string::npos)
      request.headers[lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
    at = next;
  }
  if (lower(request.header("transfer-encoding")).find("chunked") != std::string::npos) {
    ScriptedResponse refusal = ScriptedResponse::text(
        501, "scripted server: chunked request bodies are not supported; send Content-Length");
    send_all(fd, render(refusal));
    return;
  }
  if (lower(request.header("expect")) == "100-continue")
    send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n");
  size_t length = 0;
  if (std::string cl = request.header("content-length"); !cl.empty())
    length = static_cast<size_t>(std::stoull(cl));
  while (data.size() < head_end + 4 + length)
    if (!read_some()) return;
  request.body = data.substr(head_end + 4, length);
  request.json = nlohmann::json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (request.json.is_discarded()) request.json = nullptr;

  ScriptedResponse response;
  Responder responder;
  {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(request);
    if (script_.empty() && responder_) {
      responder = responder_;
    } else if (script_.empty()) {
      response = ScriptedResponse::json(
          500,
          {{"error",
            {{"type", "script_exhausted"},
             {"message", "scripted server: request " + std::to_string(requests_.size()) + " (" +
                             request.method + " " + request.path + ") came after the script's " +
                             std::to_string(script_taken_) + " responses ran out"}}}},
          {{"x-should-retry", "false"}});
    } else {
      response = std::move(script_.front());
      script_.pop_front();
      ++script_taken_;
    }
  }
  if (responder) response = responder(request);

  switch (response.action) {
    case ScriptedResponse::Action::kDrop:
      return;
    case ScriptedResponse::Action::kHang:
      wait_while_client_stays(fd, std::chrono::duration_cast<std::chrono::milliseconds>(kHangLimit));
      return;
    case ScriptedResponse::Action::kRespond:
      if (response.delay.count() > 0 && !wait_while_client_stays(fd, response.delay)) return;
      send_all(fd, render(response));
      return;
  }
}

nlohmann::json openai_chat_reply(const std::string& text, const ScriptedUsage& usage,
                                 const std::string& finish_reason, const std::string& model) {
  return {
      {"id", "chatcmpl-scripted"},
      {"object", "chat.completion"},
      {"created", 1730000000},
      {"model", model},
      {"choices",
       {{{"index", 0},
         {"message", {{"role", "assistant"}, {"content", text}, {"refusal", nullptr}}},
         {"finish_reason", finish_reason}}}},
      {"usage",
       {{"prompt_tokens", usage.input},
        {"completion_tokens", usage.output},
        {"total_tokens", usage.input + usage.output},
        {"prompt_tokens_details", {{"cached_tokens", usage.cached}}},
        {"completion_tokens_details", {{"reasoning_tokens", usage.reasoning}}}}},
  };
}

nlohmann::json anthropic_message_reply(const std::string& text, const ScriptedUsage& usage,
                                       const std::string& stop_reason, const std::string& model) {
  return {
      {"id", "msg_scripted"},
      {"type", "message"},
      {"role", "assistant"},
      {"model", model},
      {"content", {{{"type", "text"}, {"text", text}}}},
      {"stop_reason", stop_reason},
      {"stop_sequence", nullptr},
      {"usage",
       {{"input_tokens", usage.input},
        {"output_tokens", usage.output},
        {"cache_creation_input_tokens", usage.cache_creation},
        {"cache_read_input_tokens", usage.cached}}},
  };
}

nlohmann::json openai_error(const std::string& type, const std::string& message,
                            const std::string& code) {
  nlohmann::json e = {{"message", message}, {"type", type}, {"param", nullptr}};
  e["code"] = code.empty() ? nlohmann::json(nullptr) : nlohmann::json(code);
  return {{"error", e}};
}

nlohmann::json anthropic_error(const std::string& type, const std::string& message) {
  return {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
}

}  // namespace mgk::test
