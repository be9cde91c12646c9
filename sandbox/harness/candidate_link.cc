#include "candidate_link.h"

#include <unistd.h>

#include <cmath>

#include "solution.h"

namespace mgk::harness {

using sandbox::SolutionFault;

namespace {
// Its replies and requests are small: a larger frame is the candidate's garbage.
constexpr uint32_t kMaxCandidateFrame = 1u << 20;
}  // namespace

CandidateLink::CandidateLink(int fd, BrokerClient& broker, BufferPool& pool)
    : channel_(fd), broker_(broker), pool_(pool) {
  channel_.set_max_frame(kMaxCandidateFrame);
}

wire::Reply CandidateLink::command(const wire::cand::Command& c, const std::vector<int>& fds) {
  try {
    wire::send(channel_, c, fds);
  } catch (const wire::ClosedError&) {
    throw CandidateGone();
  }
  for (;;) {
    wire::Frame f;
    try {
      f = wire::receive(channel_);
    } catch (const wire::ClosedError&) {
      throw CandidateGone();
    } catch (const std::exception& e) {
      // Whatever it writes on its socket is the candidate process's doing.
      throw SolutionFault(std::string("the candidate process broke the protocol: ") + e.what());
    }
    for (int fd : f.fds) ::close(fd);  // the candidate has nothing to hand over
    if (const auto* r = std::get_if<wire::Request>(&f.body)) {
      serve(*r);
    } else if (const auto* reply = std::get_if<wire::Reply>(&f.body)) {
      if (const wire::Failure* failed = reply->failure()) throw SolutionFault(failed->error);
      return *reply;
    } else {
      throw SolutionFault("the candidate process broke the protocol: it sent a frame the harness did not ask for");
    }
  }
}

double CandidateLink::time_of(const wire::Reply& r, const char* what) {
  const auto* t = std::get_if<wire::CallTime>(&r.answer);
  if (!t || !std::isfinite(t->us) || t->us < 0)
    throw SolutionFault(std::string("the candidate process broke the protocol: it answered ") + what +
                        " without one finite, non-negative time");
  return t->us;
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

std::string CandidateLink::init(int device, int rank, int world, bool timed) {
  if (timed) channel_.set_spin(wire::cand::kTimedSpin);
  const wire::Reply r = command(wire::cand::Init{device, rank, world, timed});
  const auto* started = std::get_if<wire::Started>(&r.answer);
  if (!started) throw SolutionFault("the candidate process broke the protocol: it answered init without its start");
  return started->write_guard;
}

void CandidateLink::measure_overhead(int warmup, int probes) {
  if (loaded_) throw std::runtime_error("the protocol's overhead is measured before the candidate's library loads");
  const SharedBuffer& flags = pool_.symmetric(sizeof(uint64_t) * size_t(pool_.world()));
  const int flags_id = share(flags);
  const SharedBuffer& scratch = pool_.private_buffer(32);
  char* b = static_cast<char*>(scratch.mapping.local());
  TrustedCopier copier;
  std::vector<double> samples;
  for (int i = 0; i < warmup + probes; ++i) {
    const double t0 = monotonic_us();
    const double us = time_of(command(wire::cand::Probe{flags_id}), "a probe");
    if (pool_.world() > 1) broker_.barrier();
    const double copy_us = copier.copy({{b, b + 16, 16}});
    if (i >= warmup) samples.push_back(monotonic_us() - t0 - us - 2 * copy_us);
  }
  overhead_ = summarize_overhead(std::move(samples));
}

void CandidateLink::load(const std::string& library) {
  command(wire::cand::Load{library});
  loaded_ = true;
}

int CandidateLink::share(const SharedBuffer& b) {
  auto it = shared_.find(&b);
  if (it != shared_.end()) return it->second;
  const int id = next_id_++;
  command(wire::cand::MapBuffer{id, b.mapping.bytes(), b.mapping.mapped(), b.symmetric}, b.fds);
  shared_[&b] = id;
  return id;
}

void CandidateLink::setup(const wire::cand::Setup& setup) { command(setup); }

double CandidateLink::call(int set, bool aligned) { return time_of(command(wire::cand::Call{set, aligned}), "a call"); }

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
