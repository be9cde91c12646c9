#include "candidate_link.h"

#include <unistd.h>

#include "solution.h"

namespace mgk::harness {

using sandbox::SolutionFault;

CandidateLink::CandidateLink(int fd, BrokerClient& broker, BufferPool& pool)
    : channel_(fd), broker_(broker), pool_(pool) {}

wire::Reply CandidateLink::command(const wire::cand::Command& c, const std::vector<int>& fds) {
  try {
    wire::send(channel_, c, fds);
    for (;;) {
      wire::Frame f = wire::receive(channel_);
      for (int fd : f.fds) ::close(fd);  // the candidate has nothing to hand over
      if (const auto* r = std::get_if<wire::Request>(&f.body)) {
        serve(*r);
      } else if (const auto* reply = std::get_if<wire::Reply>(&f.body)) {
        if (!reply->ok) throw SolutionFault(reply->error);
        return *reply;
      } else {
        throw SolutionFault("the candidate process sent an unexpected frame");
      }
    }
  } catch (const wire::ClosedError&) {
    throw CandidateGone();
  }
}

void CandidateLink::serve(const wire::Request& r) {
  wire::Response resp{r.kind, true, "", 0};
  std::vector<int> fds;
  try {
    if (r.kind == wire::RequestKind::kSymAlloc) {
      const SharedBuffer& b = pool_.symmetric(r.bytes);
      resp.mapped = b.mapping.mapped();
      fds = b.fds;
    } else {
      broker_.barrier();
    }
  } catch (const std::exception& e) {
    resp.ok = false;
    resp.error = e.what();
    fds.clear();
  }
  wire::send(channel_, resp, fds);
}

void CandidateLink::init(int device, int rank, int world) { command(wire::cand::Init{device, rank, world}); }

void CandidateLink::load(const std::string& library) { command(wire::cand::Load{library}); }

int CandidateLink::share(const SharedBuffer& b) {
  auto it = shared_.find(&b);
  if (it != shared_.end()) return it->second;
  const int id = next_id_++;
  command(wire::cand::MapBuffer{id, b.mapping.bytes(), b.mapping.mapped(), b.symmetric}, b.fds);
  shared_[&b] = id;
  return id;
}

void CandidateLink::setup(const wire::cand::Setup& setup) { command(setup); }

double CandidateLink::call(int set, bool aligned) {
  wire::Reply r = command(wire::cand::Call{set, aligned});
  if (r.times_us.size() != 1) throw SolutionFault("the candidate process answered a call without its time");
  return r.times_us[0];
}

void CandidateLink::teardown() {
  command(wire::cand::Teardown{});
  shared_.clear();
}

void CandidateLink::exit() {
  try {
    command(wire::cand::Exit{});
  } catch (const SolutionFault&) {
    // It is leaving anyway.
  }
}

}  // namespace mgk::harness
