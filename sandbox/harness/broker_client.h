// The trusted rank's side of the conversation with the launcher (mgk, over a Unix socket):
// commands in, replies and phases out, and the requests that need every rank of the group
// (symmetric allocation, host barrier).
#pragma once
#include <string>
#include <vector>

#include "wire/protocol.h"

namespace mgk::harness {

class BrokerClient {
 public:
  BrokerClient(wire::Channel channel, int rank) : channel_(std::move(channel)), rank_(rank) {}

  wire::Command next_command();
  void reply(wire::Reply r);
  // Tells the launcher what this rank is doing now, so a hang can be named.
  void phase(const std::string& what) { wire::send(channel_, wire::Phase{rank_, what}); }

  // Sends this rank's descriptor of a new allocation; returns every rank's (index = rank),
  // received as new descriptors the caller owns.
  std::vector<int> exchange_fd(int fd, size_t bytes);
  void barrier();
  int rank() const { return rank_; }

 private:
  wire::Frame request(const wire::Request& r, const std::vector<int>& fds);
  wire::Channel channel_;
  int rank_;
};

}  // namespace mgk::harness
