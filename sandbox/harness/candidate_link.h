// The trusted rank's side of the candidate process (mgk-candidate), which runs the model's
// code in a sandbox of its own. The harness drives it over a socket the launcher gave both:
// it maps the buffers the harness made (inputs, outputs, snapshots, barrier flags), sets the
// candidate up, and makes calls. While it waits for an answer it serves the candidate's
// collective requests (symmetric memory, made by the harness for the whole group; the host
// barrier), so the candidate process needs nothing but this one socket.
#pragma once
#include <map>
#include <string>

#include "broker_client.h"
#include "solution.h"
#include "symmetric.h"
#include "wire/protocol.h"

namespace mgk::harness {

// The candidate process ended without answering (its code crashed it, or exited).
struct CandidateGone : sandbox::SolutionFault {
  CandidateGone() : sandbox::SolutionFault("the candidate process ended (it crashed, or its code exited)") {}
};

class CandidateLink {
 public:
  CandidateLink(int fd, BrokerClient& broker, BufferPool& pool);

  void init(int device, int rank, int world);
  void load(const std::string& library);
  // Maps `b` into the candidate (once per buffer); returns the id Setup refers to it by.
  int share(const SharedBuffer& b);
  void setup(const wire::cand::Setup& setup);
  double call(int set, bool aligned);  // the call's start-to-end time, µs
  void teardown();                     // forgets the shared buffers too
  void exit();

 private:
  // Sends `c` and serves the candidate's requests until its reply; a failure it reports, or
  // its process ending, is thrown as SolutionFault.
  wire::Reply command(const wire::cand::Command& c, const std::vector<int>& fds = {});
  void serve(const wire::Request& r);
  wire::Channel channel_;
  BrokerClient& broker_;
  BufferPool& pool_;
  std::map<const SharedBuffer*, int> shared_;
  int next_id_ = 0;
};

}  // namespace mgk::harness
