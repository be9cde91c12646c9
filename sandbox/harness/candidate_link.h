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
#include "outside_clock.h"
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

  // `timed`: both ends then wait for each other without sleeping (wire::cand::kTimedSpin),
  // so that the outside clock measures the call, not how long a sleeping process takes to wake.
  // Returns where the candidate process may write files, as it says (its write guard).
  std::string init(int device, int rank, int world, bool timed);
  // Before load: `probes` probe calls through the very path a timed call takes (after
  // `warmup` more), collective over the group; what they cost beyond their own time is the
  // overhead the outside clock subtracts (outside_clock.h).
  void measure_overhead(int warmup, int probes);
  const ProtocolOverhead& overhead() const { return overhead_; }
  void load(const std::string& library);
  // Maps `b` into the candidate (once per buffer); returns the id Setup refers to it by.
  int share(const SharedBuffer& b);
  void setup(const wire::cand::Setup& setup);
  double call(int set, bool aligned);  // the call's start-to-end time, µs, as the candidate reports it
  void teardown();                     // forgets the shared buffers too
  void exit();

 private:
  // Sends `c` and serves the candidate's requests until its reply. A failure it reports,
  // its process ending, and anything it sends that the protocol does not allow (garbage, an
  // oversized or unknown frame, a reply without what was asked) are the candidate's:
  // thrown as SolutionFault.
  wire::Reply command(const wire::cand::Command& c, const std::vector<int>& fds = {});
  void serve(const wire::Request& r);
  // The one time a call's reply must carry: finite and not negative.
  static double time_of(const wire::Reply& r, const char* what);
  wire::Channel channel_;
  BrokerClient& broker_;
  BufferPool& pool_;
  std::map<const SharedBuffer*, int> shared_;
  int next_id_ = 0;
  bool loaded_ = false;
  ProtocolOverhead overhead_;
};

}  // namespace mgk::harness
