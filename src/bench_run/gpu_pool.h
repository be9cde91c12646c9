// The GPUs evaluations run on, handed out as groups of a problem's world size. A group
// holds its GPUs alone while it evaluates, so groups running at once are disjoint: a
// 2-rank problem on 8 GPUs runs four evaluations at a time. Where a problem has more ranks
// than there are GPUs, its ranks share them (one GPU: every rank on it), the group takes
// every GPU, and the evaluation is checked, not timed. Waiters are served in arrival
// order, so a large group is not starved by small ones. Thread-safe.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace mgk::bench_run {

// The GPU of each rank when `world` ranks run on `gpus` (distinct): one GPU each when
// there are enough, else round robin (rank r on gpus[r % n]).
std::vector<int> rank_gpus(int world, const std::vector<int>& gpus);

// "0,0,1": a GPU list as --gpus takes it.
std::string gpu_list(const std::vector<int>& gpus);

class GpuPool {
 public:
  // `gpus`: the GPU indices evaluations may use; duplicates are dropped. Empty: UsageError.
  explicit GpuPool(std::vector<int> gpus);

  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();  // gives the GPUs back
    const std::vector<int>& rank_gpus() const { return ranks_; }  // per rank
    bool ranks_share() const;

   private:
    friend class GpuPool;
    Lease(GpuPool* pool, std::vector<int> taken, std::vector<int> ranks)
        : pool_(pool), taken_(std::move(taken)), ranks_(std::move(ranks)) {}
    GpuPool* pool_;
    std::vector<int> taken_;  // distinct GPUs held
    std::vector<int> ranks_;
  };

  // Blocks until a group for `world` ranks is free. Throws mgk::Interrupted when `cancel`
  // becomes true while waiting.
  Lease acquire(int world, const std::atomic<bool>* cancel = nullptr);

  const std::vector<int>& gpus() const { return gpus_; }
  // The groups that can evaluate at once for `world` ranks (what --dry-run shows).
  std::vector<std::vector<int>> groups(int world) const;

 private:
  void release(const std::vector<int>& taken);
  void advance();  // the next waiting ticket's turn (mu_ held)
  std::vector<int> gpus_;
  std::vector<bool> busy_;  // by position in gpus_
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t next_ticket_ = 0, serving_ = 0;
  std::set<uint64_t> abandoned_;  // tickets whose waiters gave up before their turn
};

}  // namespace mgk::bench_run
