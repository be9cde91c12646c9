// The rank's side of the conversation with the launcher (mgk, over a Unix socket):
// requests that need every rank (symmetric allocation, host barrier) and replies to commands.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wire/channel.h"

namespace mgk::harness {

class BrokerClient {
 public:
  BrokerClient(wire::Channel channel, int rank) : channel_(std::move(channel)), rank_(rank) {}

  wire::Message next_command() { return channel_.receive(); }
  void reply(nlohmann::json body) {
    body["type"] = "reply";
    body["rank"] = rank_;
    channel_.send(body);
  }
  // Tells the launcher what this rank is doing now, so a hang can be named.
  void phase(const std::string& what) { channel_.send({{"type", "phase"}, {"rank", rank_}, {"phase", what}}); }

  // Sends this rank's descriptor; returns every rank's (index = rank), received as new fds.
  std::vector<int> exchange_fd(int fd, size_t bytes);
  void barrier();

 private:
  wire::Message request(const nlohmann::json& body, const std::vector<int>& fds = {});
  wire::Channel channel_;
  int rank_;
};

}  // namespace mgk::harness
