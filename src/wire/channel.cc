#include "wire/channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace mgk::wire {

namespace {
constexpr size_t kMaxFds = 64;

[[noreturn]] void sys_fail(const std::string& what) {
  throw Error(what + ": " + std::strerror(errno));
}

sockaddr_un address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof(a.sun_path)) throw Error("socket path too long: " + path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE || errno == ECONNRESET) throw ClosedError("peer closed the connection");
      sys_fail("send");
    }
    p += w, n -= size_t(w);
  }
}

void read_all(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r == 0) throw ClosedError("peer closed the connection");
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == ECONNRESET) throw ClosedError("peer reset the connection");
      sys_fail("recv");
    }
    p += r, n -= size_t(r);
  }
}
}  // namespace

Channel::~Channel() {
  if (fd_ >= 0) ::close(fd_);
}

Channel& Channel::operator=(Channel&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    max_frame_ = o.max_frame_;
    spin_ = o.spin_;
    o.fd_ = -1;
  }
  return *this;
}

void Channel::send(const nlohmann::json& body, const std::vector<int>& fds) {
  if (fds.size() > kMaxFds) throw Error("too many descriptors in one frame");
  std::string text = body.dump();
  uint32_t len = uint32_t(text.size());
  // The header goes in one sendmsg with the descriptors, so they arrive with its first byte.
  iovec iov{&len, sizeof(len)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    ssize_t w = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (w == ssize_t(sizeof(len))) break;
    if (w >= 0) {  // partial header: finish it plainly (descriptors went with byte 0)
      write_all(fd_, reinterpret_cast<char*>(&len) + w, sizeof(len) - size_t(w));
      break;
    }
    if (errno == EINTR) continue;
    if (errno == EPIPE || errno == ECONNRESET) throw ClosedError("peer closed the connection");
    sys_fail("sendmsg");
  }
  write_all(fd_, text.data(), text.size());
}

Message Channel::receive() {
  if (spin_.count() > 0) {
    const auto until = std::chrono::steady_clock::now() + spin_;
    pollfd p{fd_, POLLIN, 0};
    while (::poll(&p, 1, 0) == 0 && std::chrono::steady_clock::now() < until) {
    }
  }
  uint32_t len = 0;
  iovec iov{&len, sizeof(len)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t r;
  do r = ::recvmsg(fd_, &msg, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r == 0) throw ClosedError("peer closed the connection");
  if (r < 0) {
    if (errno == ECONNRESET) throw ClosedError("peer reset the connection");
    sys_fail("recvmsg");
  }
  Message m;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      m.fds.resize(n);
      std::memcpy(m.fds.data(), CMSG_DATA(c), n * sizeof(int));
    }
  }
  if (size_t(r) < sizeof(len)) read_all(fd_, reinterpret_cast<char*>(&len) + r, sizeof(len) - size_t(r));
  if (len > max_frame_)
    throw Error("a frame of " + std::to_string(len) + " bytes exceeds the limit of " + std::to_string(max_frame_));
  std::string text(len, '\0');
  read_all(fd_, text.data(), len);
  try {
    m.body = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(std::string("malformed frame from peer: ") + e.what());
  }
  return m;
}

Listener::Listener(const std::string& path) : path_(path) {
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) sys_fail("socket");
  ::unlink(path.c_str());
  sockaddr_un a = address(path);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) < 0) sys_fail("bind " + path);
  if (::listen(fd_, 128) < 0) sys_fail("listen " + path);
}

Listener::~Listener() {
  if (fd_ >= 0) ::close(fd_);
  ::unlink(path_.c_str());
}

Channel Listener::accept(std::chrono::milliseconds timeout) {
  pollfd p{fd_, POLLIN, 0};
  int rc;
  do rc = ::poll(&p, 1, int(timeout.count()));
  while (rc < 0 && errno == EINTR);
  if (rc < 0) sys_fail("poll");
  if (rc == 0) throw Error("no connection on " + path_ + " within " + std::to_string(timeout.count()) + " ms");
  int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (c < 0) sys_fail("accept");
  return Channel(c);
}

Channel connect(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) sys_fail("socket");
  sockaddr_un a = address(path);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) < 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    sys_fail("connect " + path);
  }
  return Channel(fd);
}

}  // namespace mgk::wire
