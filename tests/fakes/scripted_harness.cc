// A stand-in for mgk-harness that speaks the real protocol (wire/protocol.h) and plays a
// scenario, so that the launcher, the watchdog, the verdicts, the exit codes and the report
// are tested on machines without a GPU. The scenario is the part of the program's name
// after "harness-" (tests make symlinks: scripted-harness-hang, ...):
//   correct        every check passes; reference 10 us, candidate 5 us, floor 2 us a call
//   incorrect      the candidate's first trial mismatches on rank 1
//   alwaysincorrect  every trial of the candidate mismatches on rank 1
//   incorrectonrank3  every trial of the candidate mismatches on rank 3 (so only a group of
//                  four or more sees it: the structure check's)
//   incorrectthenhang  the candidate's first trial mismatches on rank 1, its second never answers
//   hang           the candidate's first trial never answers
//   crash          the candidate's first call makes its candidate process abort
//   reffails       the reference fails its own trial
//   harnessfault   the harness reports its own failure in the candidate's first trial
//   diesmidrun     the harness process exits during the candidate's first trial
//   diesbeforeconnect  exits before it connects
//   diesathello / silentathello  connects and is asked which rank it is, then exits / never answers
//   initfails      the candidate process cannot make its CUDA context (a GPU too full), as the
//                  real one reports it: a failure of the candidate process, before its code loads
//   belowfloor     like correct, but the candidate's calls take 1 us: under the floor
//   nogpu / badprobe / probefails / slowprobe: what `probe` does (no GPU / garbage / exit 3 /
//                  no answer for two minutes)
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "wire/protocol.h"

namespace wire = mgk::wire;

namespace {

struct CandidateGone : std::runtime_error {
  CandidateGone() : std::runtime_error("the candidate process ended (it crashed, or its code exited)") {}
};

std::string scenario_of(const char* argv0) {
  std::string name = argv0;
  name = name.substr(name.rfind('/') + 1);
  auto at = name.find("harness-");
  return at == std::string::npos ? "correct" : name.substr(at + 8);
}

const char* arg(int argc, char** argv, const char* name) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return nullptr;
}

int probe(const std::string& s) {
  if (s == "nogpu") return std::puts(R"({"gpus":[],"no_gpu":"scripted: no GPU here"})"), 0;
  if (s == "badprobe") return std::puts("this is not JSON"), 0;
  if (s == "probefails") return std::fputs("scripted probe failure\n", stderr), 3;
  if (s == "slowprobe") sleep(120);
  std::puts(R"({"cuda_driver_version":13000,"cuda_runtime_version":13000,"nccl_version":22803,)"
            R"("gpus":[{"index":0,"name":"Scripted GPU","sms":132,"memory_bytes":150000000000,"l2_bytes":62914560,"cc":"9.0"},)"
            R"({"index":1,"name":"Scripted GPU","sms":132,"memory_bytes":150000000000,"l2_bytes":62914560,"cc":"9.0"}],)"
            R"("peer_access":[{"src":0,"dst":1,"access":true,"native_atomics":true},{"src":1,"dst":0,"access":true,"native_atomics":true}]})");
  return 0;
}

class Scripted {
 public:
  Scripted(std::string scenario, int rank, int candidate_fd)
      : s_(std::move(scenario)), rank_(rank), candidate_(candidate_fd) {}

  // Returns false when the launcher said goodbye.
  bool handle(const wire::Command& c, wire::Reply& r) {
    if (std::holds_alternative<wire::Exit>(c)) return false;
    if (auto* i = std::get_if<wire::Init>(&c)) {
      (void)i;
      if (s_ == "initfails" && rank_ == 1) throw std::runtime_error("cannot use GPU 0 (out of memory)");
      r.answer = wire::Started{"Scripted GPU", 132, ""};
      to_candidate(wire::cand::Init{0, rank_, 2});
    } else if (std::holds_alternative<wire::NcclId>(c)) {
      r.answer = wire::NcclIdMade{"00"};
    } else if (std::holds_alternative<wire::Load>(c)) {
      r.answer = wire::Loaded{};
    } else if (auto* t = std::get_if<wire::Trial>(&c)) {
      r.answer = trial(*t);
    } else if (std::holds_alternative<wire::BackToBack>(c)) {
      r.answer = wire::Judged{};
    } else if (auto* t = std::get_if<wire::Time>(&c)) {
      const double us = t->who == wire::Who::kReference ? 10.0 : s_ == "belowfloor" ? 1.0 : 5.0;
      r.answer = wire::TimedCalls{wire::Verdict{}, std::vector<double>(size_t(t->iterations), us), {},
                                  int(t->checked.size())};
    } else if (auto* f = std::get_if<wire::TimeFloor>(&c)) {
      r.answer = wire::FloorTimes{std::vector<double>(size_t(f->iterations), 2.0)};
    }
    return true;
  }

 private:
  wire::Answer trial(const wire::Trial& t) {
    const bool candidate = t.who == wire::Who::kCandidate;
    const int n = candidate ? ++candidate_trials_ : 0;
    if (candidate && s_ == "incorrectthenhang" && n == 2)
      for (;;) pause();
    const bool on_rank3 = s_ == "incorrectonrank3" && rank_ == 3;
    const bool mismatch =
        on_rank3 || s_ == "alwaysincorrect" || (n == 1 && (s_ == "incorrect" || s_ == "incorrectthenhang"));
    if (candidate && !mismatch && n > 1) return wire::Judged{};  // the other scenarios play out in the first trial
    if (candidate && mismatch && (rank_ == 1 || on_rank3)) {
      wire::Mismatch m;
      m.output = "y";
      m.rank = rank_;
      m.index = "[5]";
      m.flat_index = 5;
      m.expected = 2.0;
      m.bound = 0.01;
      m.failures = 3;
      m.numel = 100;  // got: NaN
      return wire::Judged{wire::Verdict{false, wire::FailureKind::kMismatch, "output mismatch", m}};
    } else if (candidate && s_ == "hang") {
      std::fputs("scripted harness: hanging in the candidate's first trial\n", stderr);  // tests wait for it
      std::fflush(stderr);
      for (;;) pause();
    } else if (candidate && s_ == "crash") {
      to_candidate(wire::cand::Call{0, true});  // the scripted candidate aborts
    } else if (candidate && s_ == "harnessfault") {
      return wire::failure_reply(rank_, wire::Fault::kHarness, std::nullopt, "scripted harness fault").answer;
    } else if (candidate && s_ == "diesmidrun") {
      std::fputs("scripted harness: leaving in the middle of a trial\n", stderr);
      _exit(9);
    } else if (!candidate && s_ == "reffails") {
      return wire::Judged{wire::Verdict{false, wire::FailureKind::kMismatch, "output mismatch", std::nullopt}};
    }
    return wire::Judged{};
  }

  // Drives the candidate process as the real harness does; its death becomes the
  // solution's failure, as in sandbox/harness/candidate_link.cc.
  void to_candidate(const wire::cand::Command& c) {
    if (!candidate_.valid()) return;
    try {
      wire::send(candidate_, c);
      wire::Frame f = wire::receive(candidate_);
      if (auto* rep = std::get_if<wire::Reply>(&f.body); rep && !rep->ok()) throw std::runtime_error(rep->failure()->error);
    } catch (const wire::ClosedError&) {
      throw CandidateGone();
    }
  }

  std::string s_;
  int rank_;
  wire::Channel candidate_;
  int candidate_trials_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string scenario = scenario_of(argv[0]);
  if (argc >= 2 && std::strcmp(argv[1], "probe") == 0) return probe(scenario);
  if (scenario == "diesbeforeconnect") {
    std::fputs("scripted harness: leaving before connecting\n", stderr);
    return 7;
  }
  const char* socket = arg(argc, argv, "--socket");
  const char* rank = arg(argc, argv, "--rank");
  const char* cfd = arg(argc, argv, "--candidate-fd");
  if (!socket || !rank) return 64;
  wire::Channel launcher = wire::connect(socket);
  if (scenario == "diesathello" || scenario == "silentathello") {
    wire::receive(launcher);  // "which rank are you?"
    if (scenario == "silentathello")
      for (;;) pause();
    std::fputs("scripted harness: leaving instead of saying which rank I am\n", stderr);
    return 8;
  }
  Scripted self(scenario, std::atoi(rank), cfd ? std::atoi(cfd) : -1);
  try {
    for (;;) {
      wire::Frame f = wire::receive(launcher);
      const auto* c = std::get_if<wire::Command>(&f.body);
      if (!c) return 3;
      wire::Reply r;
      bool more = true;
      try {
        more = self.handle(*c, r);
      } catch (const CandidateGone& e) {
        r = wire::failure_reply(std::atoi(rank), wire::Fault::kSolution, wire::Who::kCandidate, e.what());
        std::get<wire::Failure>(r.answer).candidate_gone = true;
      } catch (const std::exception& e) {
        r = wire::failure_reply(std::atoi(rank), wire::Fault::kSolution, wire::Who::kCandidate, e.what());
      }
      r.rank = std::atoi(rank);
      wire::send(launcher, r);
      if (!more) return 0;
    }
  } catch (const wire::ClosedError&) {
    return 0;
  }
}
