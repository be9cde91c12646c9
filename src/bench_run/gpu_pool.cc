#include "bench_run/gpu_pool.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "common/error.h"
#include "common/interrupt.h"

namespace mgk::bench_run {

std::vector<int> rank_gpus(int world, const std::vector<int>& gpus) {
  std::vector<int> out;
  for (int r = 0; r < world && !gpus.empty(); ++r) out.push_back(gpus[size_t(r) % gpus.size()]);
  return out;
}

std::string gpu_list(const std::vector<int>& gpus) {
  std::string s;
  for (int g : gpus) s += (s.empty() ? "" : ",") + std::to_string(g);
  return s;
}

GpuPool::GpuPool(std::vector<int> gpus) {
  std::set<int> seen;
  for (int g : gpus)
    if (seen.insert(g).second) gpus_.push_back(g);
  if (gpus_.empty()) throw UsageError("no GPU to evaluate on");
  busy_.assign(gpus_.size(), false);
}

GpuPool::Lease::Lease(Lease&& o) noexcept
    : pool_(o.pool_), taken_(std::move(o.taken_)), ranks_(std::move(o.ranks_)) {
  o.pool_ = nullptr;
}

GpuPool::Lease::~Lease() {
  if (pool_) pool_->release(taken_);
}

bool GpuPool::Lease::ranks_share() const { return taken_.size() < ranks_.size(); }

GpuPool::Lease GpuPool::acquire(int world, const std::atomic<bool>* cancel) {
  const size_t need = std::min(size_t(std::max(world, 1)), gpus_.size());
  std::unique_lock lock(mu_);
  const uint64_t ticket = next_ticket_++;
  auto my_turn_and_free = [&] {
    return serving_ == ticket && size_t(std::count(busy_.begin(), busy_.end(), false)) >= need;
  };
  while (!my_turn_and_free()) {
    if (cancel && cancel->load()) {
      // Leave the queue without blocking those behind: skip this ticket when it comes up.
      if (serving_ == ticket) advance();
      else abandoned_.insert(ticket);
      cv_.notify_all();
      throw Interrupted();
    }
    cv_.wait_for(lock, std::chrono::milliseconds(200));
  }
  std::vector<int> taken;
  for (size_t i = 0; i < gpus_.size() && taken.size() < need; ++i)
    if (!busy_[i]) busy_[i] = true, taken.push_back(gpus_[i]);
  advance();
  cv_.notify_all();
  return Lease(this, taken, rank_gpus(world, taken));
}

void GpuPool::advance() {
  ++serving_;
  while (abandoned_.erase(serving_)) ++serving_;
}

void GpuPool::release(const std::vector<int>& taken) {
  {
    std::lock_guard lock(mu_);
    for (int g : taken) busy_[size_t(std::find(gpus_.begin(), gpus_.end(), g) - gpus_.begin())] = false;
  }
  cv_.notify_all();
}

std::vector<std::vector<int>> GpuPool::groups(int world) const {
  const size_t per = std::min(size_t(std::max(world, 1)), gpus_.size());
  std::vector<std::vector<int>> out;
  for (size_t at = 0; at + per <= gpus_.size(); at += per) {
    std::vector<int> group(gpus_.begin() + long(at), gpus_.begin() + long(at + per));
    out.push_back(rank_gpus(world, group));
  }
  return out;
}

}  // namespace mgk::bench_run
