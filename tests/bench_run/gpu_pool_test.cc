// GPU groups: disjoint while they evaluate, ranks sharing where GPUs are fewer than ranks,
// waiters served in order, and a waiter that Ctrl-C cancels leaves without blocking others.
#include "bench_run/gpu_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "common/error.h"
#include "common/interrupt.h"

namespace mgk::bench_run {
namespace {

TEST(RankGpus, OneGpuEachWhereThereAreEnoughElseRoundRobin) {
  EXPECT_EQ(rank_gpus(2, {3, 5, 7}), (std::vector<int>{3, 5}));
  EXPECT_EQ(rank_gpus(4, {0}), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(rank_gpus(3, {0, 1}), (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(gpu_list({0, 0, 1}), "0,0,1");
}

TEST(GpuPool, ATwoRankProblemOnEightGpusRunsFourAtATime) {
  GpuPool pool({0, 1, 2, 3, 4, 5, 6, 7});
  auto groups = pool.groups(2);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[3], (std::vector<int>{6, 7}));
  std::vector<GpuPool::Lease> held;
  std::set<int> taken;
  for (int i = 0; i < 4; ++i) {
    held.push_back(pool.acquire(2));
    for (int g : held.back().rank_gpus()) EXPECT_TRUE(taken.insert(g).second) << "GPU " << g << " handed out twice";
    EXPECT_FALSE(held.back().ranks_share());
  }
  // A fifth waits until one is given back.
  std::atomic<bool> got{false};
  std::thread fifth([&] {
    GpuPool::Lease l = pool.acquire(2);
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(got);
  held.pop_back();
  fifth.join();
  EXPECT_TRUE(got);
}

TEST(GpuPool, OnOneGpuTheRanksShareItAndOneEvaluationRunsAtATime) {
  GpuPool pool({0, 0});  // `--gpus 0,0` names one GPU
  EXPECT_EQ(pool.gpus(), std::vector<int>{0});
  EXPECT_EQ(pool.groups(4), (std::vector<std::vector<int>>{{0, 0, 0, 0}}));
  GpuPool::Lease a = pool.acquire(4);
  EXPECT_EQ(a.rank_gpus(), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_TRUE(a.ranks_share());
  std::atomic<bool> cancel{false}, got{false};
  std::thread second([&] {
    try {
      GpuPool::Lease b = pool.acquire(2, &cancel);
      got = true;
    } catch (const Interrupted&) {
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(got) << "two evaluations on one GPU at once";
  cancel = true;  // Ctrl-C while waiting
  second.join();
  EXPECT_FALSE(got);
}

TEST(GpuPool, WaitersAreServedInOrderAndACancelledOneDoesNotBlockTheQueue) {
  GpuPool pool({0, 1});
  std::optional<GpuPool::Lease> first(pool.acquire(2));
  std::vector<int> order;
  std::mutex mu;
  std::atomic<bool> cancel_b{false};
  std::thread b([&] {
    try {
      GpuPool::Lease l = pool.acquire(2, &cancel_b);
      std::lock_guard lock(mu);
      order.push_back(2);
    } catch (const Interrupted&) {
      std::lock_guard lock(mu);
      order.push_back(-2);
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::thread c([&] {
    GpuPool::Lease l = pool.acquire(1);
    std::lock_guard lock(mu);
    order.push_back(3);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  {
    std::lock_guard lock(mu);
    EXPECT_TRUE(order.empty()) << "the one-GPU waiter overtook the two-GPU one queued before it";
  }
  cancel_b = true;
  b.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(order, std::vector<int>{-2});  // c still waits: GPUs 0 and 1 are held
  }
  first.reset();
  c.join();
  EXPECT_EQ(order, (std::vector<int>{-2, 3}));
}

TEST(GpuPool, NoGpuIsAUsageError) { EXPECT_THROW(GpuPool({}), UsageError); }

}  // namespace
}  // namespace mgk::bench_run
