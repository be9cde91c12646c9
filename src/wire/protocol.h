// The typed protocol between the processes of one evaluation, included by all three
// binaries: `mgk` (the launcher and broker), `mgk-harness` (the trusted rank process: the
// reference, the oracle, the checks) and `mgk-candidate` (the isolated rank process that
// runs the model's code). Frames are JSON over wire::Channel; this header is the only place
// that spells a command, a reply or a field name.
//
//   launcher  --Command-->  harness   --CandidateCommand-->  candidate
//             <--Reply---            <--Reply-----------
//             <--Phase---            <--Request (sym_alloc, barrier)--
//             <--Request--           --Response (+ fds)-->
//             --Response-->
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "mgk/dtype.h"
#include "wire/channel.h"
#include "wire/check_spec.h"

namespace mgk::wire {

enum class Who { kReference, kCandidate };
const char* to_string(Who w);

// Which side a failed command blames: the solution (its setup/run failed, or a CUDA error
// surfaced while waiting for its work) or the harness itself (mgk's bug or the machine).
enum class Fault { kSolution, kHarness };

// Why a checked call was wrong, for the verdict's taxonomy; the text says it to a person.
enum class FailureKind { kNone, kMismatch, kModifiedInput, kIncomplete };
const char* to_string(FailureKind k);

enum class Dist { kNormal, kUniform, kRandint, kZipf };

struct InputInit {
  Dist dist = Dist::kNormal;
  double a = 0, b = 1;  // normal: mean, std; uniform, randint and zipf: [a, b)
  double exponent = 0;  // zipf
  // Special rows (mgk_input_gen in mgk/abi.h): rows of `row` elements, every zero_every-th
  // zero, every tiny_every-th scaled by `tiny`, every massive_every-th by `massive`; 0 for
  // none.
  int64_t row = 0, zero_every = 0, tiny_every = 0, massive_every = 0;
  double tiny = 0, massive = 0;
};

// One tensor of a size preset as one rank sees it.
struct TensorPlan {
  std::string name;
  mgk_dtype dtype = MGK_BF16;
  std::vector<int64_t> shape;
  int64_t numel = 0;
  bool symmetric = false;
  uint64_t alloc_bytes = 0;  // symmetric: the same on every rank (the max over ranks)
  InputInit init;            // inputs
  CheckSpec check;           // outputs
  int in_place_of = -1;      // outputs: the input (index) whose buffer this output is
};

struct Dim {
  std::string name;
  int64_t value = 0;
};

struct PresetPlan {
  std::vector<Dim> dims;  // the preset's dims and W
  std::vector<TensorPlan> inputs, outputs;
};

// The first wrong element of an output.
struct Mismatch {
  std::string output;
  int rank = 0;
  std::string index;  // "[3, 17]"
  int64_t flat_index = 0;
  std::optional<double> got;  // empty: NaN
  double expected = 0, bound = 0;
  uint64_t failures = 0;
  int64_t numel = 0;
};

struct Verdict {
  bool correct = true;
  FailureKind kind = FailureKind::kNone;
  std::string failure;  // one line, empty when correct
  std::optional<Mismatch> mismatch;
  // The largest |got - expected| / allowed error over the call's float outputs (0 where every
  // output is compared exactly): how close a correct call came to its bound, how far a wrong
  // one went past it. Outputs as they are once the call has ended.
  double worst_ratio = 0;
};

// ---- launcher -> harness ----
struct Whoami {};
struct NcclId {};
struct Init {
  std::optional<std::string> nccl_id;  // absent when ranks share a GPU: no NCCL, no reference run
  // The candidate's calls will be timed: its process's clock is then bounded by the
  // harness's own (harness/outside_clock.h), which costs a probe before the candidate's
  // library loads and a trusted copy of the outputs after every call.
  bool timed = false;
};
struct Load {
  std::string reference;
  std::string candidate;  // empty: none
  // The reference evaluated against itself: trusted code, so it runs inside the harness
  // (with NCCL). Any other candidate runs only in the candidate process.
  bool candidate_is_reference = false;
};
struct Prepare {
  PresetPlan plan;
};
struct Trial {
  Who who = Who::kCandidate;
  uint64_t seed = 0;
};
struct BackToBack {
  Who who = Who::kCandidate;
  uint64_t seed = 0;
  int calls = 0;
};
struct Time {
  Who who = Who::kCandidate;
  uint64_t block_seed = 0;
  int warmup = 0, iterations = 0;
  // Calls of the block (0-based, warm-up included) whose outputs are judged. Drawn by the
  // launcher and never shown to the candidate, whose calls all look alike.
  std::vector<int> checked;
};
struct TimeFloor {
  int warmup = 0, iterations = 0;
};
struct Teardown {};
struct Exit {};
using Command = std::variant<Whoami, NcclId, Init, Load, Prepare, Trial, BackToBack, Time, TimeFloor, Teardown, Exit>;
std::string describe(const Command& c);  // "trial", "time", ... for messages

// ---- harness -> candidate ----
namespace cand {
struct Init {
  int device = 0;
  int rank = 0, world = 1;  // needed before any buffer is mapped: which peer is "local"
  bool timed = false;       // its calls are timed: both ends wait without sleeping (kTimedSpin)
};
// How long each end of a timed evaluation's link polls before it sleeps in the kernel: a
// process woken from sleep answers tens of microseconds late, which the outside clock
// (harness/outside_clock.h) would count.
constexpr std::chrono::microseconds kTimedSpin{5000};
struct Load {
  std::string library;
};
// Before Load only, while the process runs nothing but mgk's code: one aligned call of an
// empty kernel under the call protocol (snapshotting a 16-byte buffer of its own), answered
// with its time, so the harness can measure what the protocol costs around a call.
struct Probe {
  int flags = 0;  // symmetric buffer for the device barrier (W uint64 slots)
};
// A buffer the harness allocated, mapped into the candidate: one descriptor per rank for
// a symmetric buffer (index = rank), one for a private one. The fds travel with the frame.
struct MapBuffer {
  int id = 0;
  uint64_t bytes = 0;   // as the tensor needs them
  uint64_t mapped = 0;  // rounded up to the allocation granularity
  bool symmetric = false;
};
struct TensorRef {
  TensorPlan plan;
  int buffer = 0;  // MapBuffer id
};
struct Setup {
  int rank = 0, world = 0, num_sms = 0;
  std::vector<Dim> dims;
  std::vector<std::vector<TensorRef>> input_sets;  // [set][input]
  std::vector<TensorRef> outputs;
  std::vector<int> snapshots;  // buffer per output: the outputs as the stream finished
  int flags = 0;               // symmetric buffer for the device barrier (W uint64 slots)
};
// One call. Aligned calls (trials and timing, indistinguishable) run between device
// barriers with L2 flushed and are timed; unaligned ones (back to back) skip the barriers.
struct Call {
  int set = 0;
  bool aligned = true;
};
struct Teardown {};
struct Exit {};
using Command = std::variant<Init, Load, Probe, MapBuffer, Setup, Call, Teardown, Exit>;
}  // namespace cand

// ---- replies (harness -> launcher, candidate -> harness) ----
// A reply is the answer of one kind, that of the command it answers (or a failure).
// A command that failed: which side it blames, and why.
struct Failure {
  Fault fault = Fault::kHarness;
  std::optional<Who> who;
  std::string error;
  bool candidate_gone = false;  // the candidate process ended without answering
};
// Done, with nothing to say: whoami, prepare, teardown, exit; the candidate's load,
// map_buffer, setup, teardown.
struct Done {};
struct NcclIdMade {  // nccl_id
  std::string nccl_id;
};
struct Started {  // init (the harness's and the candidate's)
  std::string gpu;
  int sms = 0;
  // a rank with a candidate process: where that process may write files, as its write
  // guard says (sandbox/candidate/write_guard.h)
  std::string write_guard;
};
// load: with a timed candidate, what the call protocol costs around a call, as probed
// before the candidate's library loaded (median and p10-p90 spread, µs); 0 otherwise.
struct Loaded {
  double protocol_overhead_us = 0, protocol_spread_us = 0;
};
struct Judged {  // trial, back_to_back
  Verdict verdict;
};
struct TimedCalls {  // time
  Verdict verdict;                  // of the calls whose outputs were judged
  std::vector<double> times_us;     // per timed call
  // the candidate, timed: per timed call, the least its time can have been as the harness
  // saw it from outside the candidate's process (harness/outside_clock.h)
  std::vector<double> outside_us;
  int checked = 0;                  // how many calls' outputs were judged
};
struct FloorTimes {  // time_floor
  std::vector<double> times_us;
};
struct CallTime {  // the candidate's probe and call: the call's time
  double us = 0;
};
using Answer = std::variant<Done, Failure, NcclIdMade, Started, Loaded, Judged, TimedCalls, FloorTimes, CallTime>;
const char* answer_name(const Answer& a);  // "judged", ...

struct Reply {
  int rank = -1;
  Answer answer;

  bool ok() const { return !std::holds_alternative<Failure>(answer); }
  const Failure* failure() const { return std::get_if<Failure>(&answer); }
  // The answer as T; mgk::Error naming both kinds when it is another (a peer that answered
  // a command with the wrong kind of reply is a protocol error, not a default value).
  template <class T>
  const T& as() const {
    if (const T* t = std::get_if<T>(&answer)) return *t;
    throw_unexpected(answer_name(Answer{T{}}));
  }

 private:
  [[noreturn]] void throw_unexpected(const char* wanted) const;
};
Reply failure_reply(int rank, Fault fault, std::optional<Who> who, std::string error);

// ---- requests that need every rank (from a rank to whoever brokers its group) ----
enum class RequestKind { kSymAlloc, kBarrier };
struct Request {
  RequestKind kind = RequestKind::kBarrier;
  int rank = -1;
  uint64_t bytes = 0;  // sym_alloc
};
struct Response {
  RequestKind kind = RequestKind::kBarrier;
  bool ok = true;
  std::string error;
  uint64_t mapped = 0;  // sym_alloc, to the candidate: the mapped size of the buffer
};

struct Phase {
  int rank = -1;
  std::string what;
};

// One received frame, decoded. The receiver owns `fds`.
struct Frame {
  std::variant<Command, cand::Command, Reply, Request, Response, Phase> body;
  std::vector<int> fds;
};

void send(Channel& c, const Command& m);
void send(Channel& c, const cand::Command& m, const std::vector<int>& fds = {});
void send(Channel& c, const Reply& m);
void send(Channel& c, const Request& m, const std::vector<int>& fds = {});
void send(Channel& c, const Response& m, const std::vector<int>& fds = {});
void send(Channel& c, const Phase& m);
// Throws ClosedError when the peer is gone, mgk::Error on a frame this protocol does not
// know (naming it).
Frame receive(Channel& c);

// JSON forms, for the launcher's result files and tests.
nlohmann::json to_json(const Verdict& v);
nlohmann::json to_json(const Mismatch& m);
Mismatch mismatch_from_json(const nlohmann::json& j);

}  // namespace mgk::wire
