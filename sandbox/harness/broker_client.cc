#include "broker_client.h"

#include <stdexcept>

namespace mgk::harness {

wire::Message BrokerClient::request(const nlohmann::json& body, const std::vector<int>& fds) {
  nlohmann::json b = body;
  b["type"] = "req";
  b["rank"] = rank_;
  channel_.send(b, fds);
  wire::Message m = channel_.receive();
  if (m.body.value("type", "") != "resp" || m.body.value("req", "") != body.value("req", ""))
    throw std::runtime_error("launcher answered '" + m.body.dump() + "' to request " + body.dump());
  if (!m.body.value("ok", false))
    throw std::runtime_error("launcher refused " + body.value("req", "") + ": " + m.body.value("error", ""));
  return m;
}

std::vector<int> BrokerClient::exchange_fd(int fd, size_t bytes) {
  wire::Message m = request({{"req", "sym_alloc"}, {"bytes", bytes}}, {fd});
  return m.fds;
}

void BrokerClient::barrier() { request({{"req", "barrier"}}); }

}  // namespace mgk::harness
