// The socket protocol between `mgk` (the launcher/broker) and the per-rank harness processes:
// length-prefixed JSON frames over a Unix stream socket, optionally carrying file
// descriptors (SCM_RIGHTS) — how CUDA VMM memory handles travel between ranks.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mgk::wire {

struct Message {
  nlohmann::json body;
  std::vector<int> fds;  // received descriptors; the receiver owns (and must close) them
};

// Thrown when the peer closed the connection (a rank exited or crashed).
struct ClosedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Channel {
 public:
  Channel() = default;
  explicit Channel(int fd) : fd_(fd) {}
  ~Channel();
  Channel(Channel&& o) noexcept : fd_(o.fd_), max_frame_(o.max_frame_), spin_(o.spin_) { o.fd_ = -1; }
  Channel& operator=(Channel&& o) noexcept;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // Sends one frame; `fds` are duplicated into the receiver (the caller keeps its copies).
  void send(const nlohmann::json& body, const std::vector<int>& fds = {});
  // Blocks for one whole frame. Throws ClosedError on EOF, mgk::Error on other failures.
  Message receive();
  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // The largest frame receive() accepts (its announced length is checked before reading).
  void set_max_frame(uint32_t bytes) { max_frame_ = bytes; }
  // receive() polls for up to `spin` before it sleeps in the kernel: a process woken from a
  // long sleep answers tens of microseconds late, which the timed path cannot afford.
  void set_spin(std::chrono::microseconds spin) { spin_ = spin; }

 private:
  int fd_ = -1;
  uint32_t max_frame_ = 256u << 20;
  std::chrono::microseconds spin_{0};
};

class Listener {
 public:
  explicit Listener(const std::string& path);  // binds and listens; removes a stale file
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  // Waits up to `timeout` for a connection; throws mgk::Error on timeout.
  Channel accept(std::chrono::milliseconds timeout);
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

Channel connect(const std::string& path);

}  // namespace mgk::wire
