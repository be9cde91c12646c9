#include "broker_client.h"

#include <unistd.h>

#include <stdexcept>

namespace mgk::harness {

wire::Command BrokerClient::next_command() {
  wire::Frame f = wire::receive(channel_);
  if (auto* c = std::get_if<wire::Command>(&f.body)) return *c;
  for (int fd : f.fds) ::close(fd);
  throw std::runtime_error("the launcher sent something other than a command");
}

void BrokerClient::reply(wire::Reply r) {
  r.rank = rank_;
  wire::send(channel_, r);
}

wire::Frame BrokerClient::request(const wire::Request& r, const std::vector<int>& fds) {
  wire::send(channel_, r, fds);
  wire::Frame f = wire::receive(channel_);
  const auto* resp = std::get_if<wire::Response>(&f.body);
  if (!resp || resp->kind != r.kind) {
    for (int fd : f.fds) ::close(fd);
    throw std::runtime_error("the launcher answered a request out of turn");
  }
  if (!resp->ok) {
    for (int fd : f.fds) ::close(fd);
    throw std::runtime_error("the launcher refused the request: " + resp->error);
  }
  return f;
}

std::vector<int> BrokerClient::exchange_fd(int fd, size_t bytes) {
  return request({wire::RequestKind::kSymAlloc, rank_, bytes}, {fd}).fds;
}

void BrokerClient::barrier() { request({wire::RequestKind::kBarrier, rank_, 0}, {}); }

}  // namespace mgk::harness
