#include "store/tuning_trial.h"

#include <gtest/gtest.h>

#include <functional>

#include "common/error.h"
#include "store/store.h"
#include "support/test_paths.h"

namespace mgk::store {
namespace {

TuningTrial trial(nlohmann::json params, std::string status, double time_us,
                  std::string size = "medium") {
  return {"kernelhash",      "collectives/all_reduce", size,    8, "NVIDIA H200", "580.65.06",
          std::move(params), std::move(status),        time_us, ""};
}

class TuningTrialTest : public ::testing::Test {
 protected:
  mgk::test::TempDir dir{"mgk-tune-store"};
  Store store = Store::open(dir.path() / "mgk.db");
};

TEST_F(TuningTrialTest, LookupByKeyIgnoresParamOrder) {
  store.record_tuning_trial(trial({{"BLOCKS", 16}, {"CHUNK_KB", 256}}, "ok", 42.5));
  TuningKey key = trial({{"CHUNK_KB", 256}, {"BLOCKS", 16}}, "", 0).key();
  auto found = store.find_tuning_trial(key);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->status, "ok");
  EXPECT_DOUBLE_EQ(found->time_us, 42.5);
  EXPECT_EQ(found->params, (nlohmann::json{{"BLOCKS", 16}, {"CHUNK_KB", 256}}));

  // Any key column that differs is another trial.
  for (auto change : std::vector<std::function<void(TuningKey&)>>{
           [](TuningKey& k) { k.kernel_hash = "other"; },
           [](TuningKey& k) { k.problem = "tp/ag_gemm"; }, [](TuningKey& k) { k.size = "large"; },
           [](TuningKey& k) { k.world_size = 4; },
           [](TuningKey& k) { k.gpu_model = "NVIDIA B200"; },
           [](TuningKey& k) { k.driver = "570.1"; },
           [](TuningKey& k) { k.params["BLOCKS"] = 32; }}) {
    TuningKey other = key;
    change(other);
    EXPECT_FALSE(store.find_tuning_trial(other));
  }
}

TEST_F(TuningTrialTest, OneRowPerKeyTheLatestWins) {
  store.record_tuning_trial(trial({{"BLOCKS", 16}}, "error", 0));
  store.record_tuning_trial(trial({{"BLOCKS", 16}}, "ok", 12.0));
  auto all = store.tuning_trials();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].status, "ok");
  EXPECT_DOUBLE_EQ(all[0].time_us, 12.0);
}

TEST_F(TuningTrialTest, ListedBestFirstWithFilters) {
  store.record_tuning_trial(trial({{"BLOCKS", 8}}, "ok", 30.0));
  store.record_tuning_trial(trial({{"BLOCKS", 16}}, "hang", 0));
  store.record_tuning_trial(trial({{"BLOCKS", 32}}, "ok", 10.0));
  store.record_tuning_trial(trial({{"BLOCKS", 64}}, "incorrect", 1.0));  // fast and wrong
  store.record_tuning_trial(trial({{"BLOCKS", 8}}, "ok", 5.0, "small"));

  TuningTrialFilter medium;
  medium.size = "medium";
  auto listed = store.tuning_trials(medium);
  ASSERT_EQ(listed.size(), 4u);
  EXPECT_EQ(listed[0].params["BLOCKS"], 32);
  EXPECT_EQ(listed[1].params["BLOCKS"], 8);
  EXPECT_NE(listed[2].status, "ok");
  EXPECT_NE(listed[3].status, "ok");
  EXPECT_EQ(listed[2].time_us, 0);  // no time is kept for a failed trial

  TuningTrialFilter ok_only;
  ok_only.status = "ok";
  ok_only.limit = 1;
  auto best = store.tuning_trials(ok_only);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].size, "small");
  EXPECT_DOUBLE_EQ(best[0].time_us, 5.0);

  TuningTrialFilter none;
  none.world_size = 2;
  EXPECT_TRUE(store.tuning_trials(none).empty());
}

TEST_F(TuningTrialTest, UnknownStatusIsRefused) {
  EXPECT_THROW(store.record_tuning_trial(trial({{"BLOCKS", 8}}, "slow", 1.0)), UsageError);
  EXPECT_TRUE(store.tuning_trials().empty());
}

TEST(CanonicalParams, SortedAndCompact) {
  EXPECT_EQ(canonical_params({{"b", 2}, {"a", "x"}}), R"({"a":"x","b":2})");
}

}  // namespace
}  // namespace mgk::store
