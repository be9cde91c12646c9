// One size preset on one trusted rank: the buffers (two input sets, outputs, snapshots, the
// oracle's results), the solutions set up for it, and what the launcher asks of it: a
// correctness trial, back-to-back calls, a timing block, the timing floor.
//
// The reference runs here, in this process. The candidate runs in the candidate process
// (CandidateLink), which maps the very buffers this process made and sees nothing else: the
// oracle's results, the comparison and the choice of which timed calls are checked stay
// here. Every call of either goes through the same protocol (sandbox/core/call.h).
#pragma once
#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "call.h"
#include "candidate_link.h"
#include "check.h"
#include "outside_clock.h"
#include "solution.h"
#include "symmetric.h"
#include "wire/protocol.h"

namespace mgk::harness {

struct RankInfo {
  int rank, world, device, num_sms;
  size_t l2_bytes;
  ncclComm_t comm;
};

// A timing block's outcome on this rank.
// Where the candidate runs: in this process (only the reference evaluated against itself,
// trusted code) or in the candidate process.
struct CandidateSlot {
  sandbox::Solution* local = nullptr;
  CandidateLink* remote = nullptr;
  bool gets_comm = false;  // the reference as candidate uses NCCL too
  // The evaluation times the candidate: its process's calls are then bounded from outside
  // (outside_clock.h), and judged on the harness's own copy of the outputs.
  bool timed = false;
  bool present() const { return local || remote; }
};

class Preset {
 public:
  // Allocates everything (collectively) and sets up the solutions, reference first.
  Preset(const wire::PresetPlan& plan, const RankInfo& info, BufferPool& pool, BrokerClient& broker,
         sandbox::Solution& reference, CandidateSlot candidate);
  ~Preset();

  // Fresh inputs from `seed`, poisoned outputs, one aligned call, then every check.
  wire::Verdict trial(wire::Who who, uint64_t seed);
  // `calls` calls in a row with no barrier between them, as a training loop makes them:
  // before each, fresh inputs (from `seed`) are written once this rank's previous call has
  // finished, alternating between the two input sets (so a call's inputs are only rewritten
  // once this rank's next call has finished), and each call's outputs are judged. A solution
  // that leans on the alignment of the other checks (no start handshake, slots reused while
  // a slower peer still reads them, a rank that runs calls ahead) fails or hangs here. Every
  // rank makes every call even after a failure; the first failure is reported.
  wire::Verdict back_to_back(wire::Who who, uint64_t seed, int calls);
  // warmup + iterations aligned calls, each on freshly drawn inputs (seeds derived from
  // `block_seed`); the outputs of the calls listed in `checked` are judged (inputs hashed
  // before and after them, the oracle run afterwards, outside the timed window). Every rank
  // makes every call; the first failure is reported.
  // The timed iterations (warm-up left out), from outside the candidate's process too when
  // timed there, and the first failure among the calls judged.
  wire::TimedCalls time(wire::Who who, uint64_t block_seed, int warmup, int iterations, const std::vector<int>& checked);
  // The timing floor: the same protocol around an empty kernel of one block per SM (as wide
  // as most solutions launch). No solution can measure below it.
  std::vector<double> time_floor(int warmup, int iterations);
  static constexpr int kFloorThreads = 512;

 private:
  static constexpr int kInputSets = 2;
  // One call of `who` on input set `set` (aligned or back to back); its time in µs. For the
  // candidate's process under the outside clock, last_outside_us_ gets the call's bound.
  double call(wire::Who who, int set, bool aligned);
  bool outside_clock() const { return candidate_.remote && candidate_.timed; }
  // Fresh inputs into `set`, outputs poisoned, this process's work finished.
  void stage(int set, uint64_t seed, bool poison);
  std::vector<unsigned long long> hash_inputs(int set);
  std::vector<mgk_input_gen> gens_for(uint64_t seed) const;
  // Hash check (when `before` is given), then the oracle for `set` drawn from `seed`: the
  // snapshot is checked (and, when it fails, the live outputs, to tell a mismatch from
  // unjoined work); the oracle's results are wiped right after.
  wire::Verdict judge(int set, uint64_t seed, const std::vector<unsigned long long>* before);
  // The first output of `got` that fails, if one does; `worst_ratio`, where given, grows to
  // the largest error ratio over all of them.
  std::optional<wire::Mismatch> compare(const std::vector<void*>& got, double* worst_ratio = nullptr);
  sandbox::SetupArgs setup_args() const;

  RankInfo info_;
  BrokerClient& broker_;
  sandbox::Solution& reference_;
  CandidateSlot candidate_;
  std::vector<wire::TensorPlan> in_plans_, out_plans_;
  std::vector<wire::Dim> dims_;
  std::vector<std::vector<const SharedBuffer*>> input_buffers_;  // [set][tensor]
  std::vector<const SharedBuffer*> output_buffers_, snapshot_buffers_;  // output_buffers_: NULL in place
  std::vector<std::vector<mgk_tensor>> inputs_;  // [set][tensor], as this process sees them
  // [set][output]: the same buffer in both sets, except an output in place of an input,
  // which is that input's buffer of the set.
  std::vector<std::vector<mgk_tensor>> outputs_;
  std::vector<std::vector<sandbox::OutputBuffers>> output_io_;
  // Under the outside clock: [set][output] the outputs -> memory only this process maps,
  // copied right after each call of the candidate's process.
  std::vector<std::vector<sandbox::OutputBuffers>> trusted_io_;
  std::vector<void*> trusted_;  // [output]
  std::unique_ptr<TrustedCopier> copier_;
  double last_outside_us_ = 0;
  bool trusted_taken_ = false;  // the last call's outputs are in trusted_io_'s copies
  std::vector<bool> updated_;  // [input]: some output updates it in place
  std::vector<void*> owned_;  // cudaMalloc'd buffers only this process sees
  std::vector<void*> expected_;
  std::vector<float*> scales_;
  const SharedBuffer* reference_flags_ = nullptr;
  const SharedBuffer* candidate_flags_ = nullptr;
  std::unique_ptr<sandbox::CallSite> site_;  // the reference's (and the floor's) calls
  unsigned long long* hash_slot_ = nullptr;
  cudaStream_t stream_ = nullptr;  // staging and judging
  bool candidate_set_up_ = false;
};

}  // namespace mgk::harness
