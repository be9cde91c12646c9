// One size preset on one rank: the buffers (input sets, outputs, snapshots, oracle
// results), the two solutions set up for it, and the two things the launcher asks of it:
// a correctness trial and a timing block.
#pragma once
#include <cuda_runtime.h>
#include <nccl.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check.h"
#include "solution.h"
#include "symmetric.h"

namespace mgk::harness {

// An error caused by the solution (its setup/run failed, or a CUDA error surfaced while
// waiting for its work), as opposed to a failure of the harness itself.
struct SolutionFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TensorPlan {
  std::string name;
  mgk_dtype dtype;
  std::vector<int64_t> shape;
  int64_t numel = 0;
  bool symmetric = false;
  size_t alloc_bytes = 0;  // symmetric: the same on every rank (max over ranks)
  mgk_input_gen gen{};     // inputs: distribution (seed filled per trial)
  CheckSpec check;         // outputs
};

struct RankInfo {
  int rank, world, device, num_sms;
  size_t l2_bytes;
  ncclComm_t comm;
};

// Start and end events of a run of timed iterations (destroyed with it).
struct EventPairs {
  explicit EventPairs(int n);
  ~EventPairs();
  EventPairs(const EventPairs&) = delete;
  EventPairs& operator=(const EventPairs&) = delete;
  // Event-to-event times in microseconds, the first `skip` (warm-up) left out.
  std::vector<double> elapsed_us(int skip) const;
  std::vector<cudaEvent_t> start, end;
};

class Preset {
 public:
  // Allocates everything (collectively) and sets up the solutions, reference first.
  Preset(const nlohmann::json& plan, const RankInfo& info, SymmetricHeap& heap, BrokerClient& broker,
         Solution& reference, Solution* candidate, bool candidate_gets_comm);
  ~Preset();

  // Fresh inputs from `seed`, poisoned outputs, one call, then every check. Returns
  // {"correct": bool, "failure": "...", "mismatch": {...}}.
  nlohmann::json trial(Solution& who, uint64_t seed);
  // `calls` calls in a row with no barrier between them, as a training loop makes them:
  // before each, fresh inputs (from `seed`) are written on the stream right behind the
  // previous call, alternating between the two input sets (so a call's inputs are only
  // rewritten once this rank's next call has finished), and the host waits only for this
  // rank's stream to judge each call's outputs. A solution that leans on the barriers of
  // the other checks (no start handshake, slots reused while a slower peer still reads
  // them, a rank that runs calls ahead) fails or hangs here. Every rank makes every call
  // even after a failure; the first failure is reported.
  nlohmann::json back_to_back(Solution& who, uint64_t seed, int calls);
  // Timed iterations, each on freshly drawn inputs (seeds derived from `block_seed`), with
  // L2 evicted and the GPUs aligned before each; the last iteration's outputs are checked.
  nlohmann::json time(Solution& who, uint64_t block_seed, int warmup, int iterations);
  // The timing floor: the same protocol around an empty kernel of one block per SM (as
  // wide as most solutions launch). No solution can measure below it, so it tells how
  // much of a small message's time is the harness's and the launch's. {"times_us": [...]}
  nlohmann::json time_floor(int warmup, int iterations);
  static constexpr int kFloorThreads = 512;

 private:
  // The timing protocol (barrier, fresh inputs, poisoned outputs, L2 flush, barrier,
  // events around `call`) once per event pair; *last_seed: the last iteration's inputs.
  void timed_loop(const std::function<void()>& call, uint64_t block_seed, EventPairs& events, uint64_t* last_seed);
  // One call of `who` on input set `set`; its outputs are snapshotted device-side the moment
  // the stream finishes it, then the host waits (errors count as the solution's, `when`).
  void call_and_snapshot(Solution& who, int set, const char* when);
  void fill_inputs(int set, uint64_t seed);
  void poison_outputs(cudaStream_t s);
  std::vector<unsigned long long> hash_inputs();
  void hash_inputs_async(unsigned long long* slots);  // one slot per input tensor
  std::vector<mgk_input_gen> gens_for(uint64_t seed) const;
  // Runs the oracle for input set `set` drawn from `seed`, checks the snapshot (and, when
  // it fails, the live outputs, to tell a mismatch from unjoined work), wipes the oracle.
  nlohmann::json judge(int set, uint64_t seed);
  nlohmann::json compare(const std::vector<void*>& got);
  void snapshot_after(cudaEvent_t done);

  RankInfo info_;
  BrokerClient& broker_;
  Solution& reference_;
  Solution* candidate_;
  std::vector<TensorPlan> in_plans_, out_plans_;
  // [set][tensor]: set 0 for trials and timing; back_to_back alternates 0 and 1.
  static constexpr int kInputSets = 2;
  std::vector<std::vector<mgk_tensor>> inputs_;
  std::vector<mgk_tensor> outputs_;
  std::vector<void*> owned_;                     // cudaMalloc'd buffers to free
  std::vector<void*> snapshots_, expected_;
  std::vector<float*> scales_;
  const SymAllocation* flags_ = nullptr;
  uint64_t epoch_ = 0;
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  unsigned long long* hash_slot_ = nullptr;
  unsigned long long* before_slot_ = nullptr;
  cudaStream_t stream_ = nullptr, side_ = nullptr;
};

}  // namespace mgk::harness
