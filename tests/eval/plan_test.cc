// The whole suite resolved as an evaluation resolves it (eval/plan): every preset, every
// rank, at 2, 4 and 8 ranks, tolerance factors evaluated with the preset's dims.
#include "eval/plan.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "problems/catalog.h"

namespace mgk::eval {
namespace {

TEST(Plan, EveryProblemPlansAtTwoFourAndEightRanks) {
  for (const auto& name : problems::list_names()) {
    SCOPED_TRACE(name);
    const problems::Spec spec = problems::load(name);
    for (int w : {2, 4, 8}) {
      if (w < spec.min_world || w > spec.max_world) continue;
      EvalPlan plan = plan_evaluation(spec, spec.size_names, "", w);
      ASSERT_EQ(plan.sizes.size(), spec.size_names.size());
      for (const auto& s : plan.sizes) {
        ASSERT_EQ(int(s.ranks.size()), w);
        for (const auto& r : s.ranks)
          for (const auto& o : r.outputs)
            if (o.check.kind == wire::CheckKind::kRounding) {
              EXPECT_GT(o.check.factor, 0) << o.name;
              EXPECT_GT(o.check.unit_roundoff, 0) << o.name;
            }
      }
    }
  }
}

TEST(Plan, AToleranceFactorMayUseThePresetsDims) {
  // all_reduce's factor is "W + 1": 3 at two ranks, 9 at eight.
  EXPECT_DOUBLE_EQ(plan_evaluation(problems::load("collectives/all_reduce"), {"small"}, "", 2).sizes[0].ranks[0].outputs[0].check.factor, 3);
  EXPECT_DOUBLE_EQ(plan_evaluation(problems::load("collectives/all_reduce"), {"small"}, "", 8).sizes[0].ranks[1].outputs[0].check.factor, 9);
}

// An in-place output reaches the harness as the index of its input (-1: not in place).
TEST(Plan, InPlaceOutputsCarryTheirInputsIndexOverTheWire) {
  const auto plan = plan_evaluation(problems::load("dp/clip_grad_norm_no_ep"), {"odd"}, "", 2);
  const auto& r = plan.sizes[0].ranks[1];
  ASSERT_EQ(r.outputs.size(), 4u);
  EXPECT_EQ(r.outputs[0].in_place_of, -1);  // total_norm, a 0-dim scalar
  EXPECT_TRUE(r.outputs[0].shape.empty());
  EXPECT_EQ(r.outputs[0].numel, 1);
  for (int k = 1; k <= 3; ++k) {
    EXPECT_EQ(r.outputs[k].in_place_of, k - 1);
    EXPECT_EQ(r.outputs[k].shape, r.inputs[k - 1].shape);
    EXPECT_EQ(r.outputs[k].dtype, MGK_BF16);
  }
  EXPECT_EQ(plan_evaluation(problems::load("quant/blocked_fp8_quantize"), {"tiny"}, "", 2).sizes[0].ranks[0].outputs[0].dtype, MGK_E4M3);
}

// An init parameter given as an expression is evaluated with the preset's dims (W1's std of
// combined_sharded_gemms is H ** -0.5: 1/16 at pkb, H = 256 at any W), and special rows reach
// the harness with their length (tp_rms_norm's x: rows of NL) and periods.
TEST(Plan, InitExpressionsAndSpecialRowsReachTheWire) {
  const auto gemms = plan_evaluation(problems::load("tp/combined_sharded_gemms"), {"pkb"}, "", 2).sizes[0].ranks[1];
  ASSERT_EQ(gemms.inputs[1].name, "W1");
  EXPECT_DOUBLE_EQ(gemms.inputs[1].init.b, 1.0 / 16);
  EXPECT_DOUBLE_EQ(gemms.inputs[1].init.a, 0);
  EXPECT_EQ(gemms.inputs[1].init.zero_every, 0);
  const auto norm = plan_evaluation(problems::load("norms/tp_rms_norm"), {"wide"}, "", 4).sizes[0].ranks[3];
  ASSERT_EQ(norm.inputs[0].name, "x");
  EXPECT_EQ(norm.inputs[0].init.row, 524288);
  EXPECT_EQ(norm.inputs[0].init.zero_every, 16);
  EXPECT_EQ(norm.inputs[0].init.tiny_every, 16);
  EXPECT_DOUBLE_EQ(norm.inputs[0].init.tiny, 0x1p-10);
  EXPECT_EQ(norm.inputs[1].init.row, 0);  // the weight has none
  const auto rs = plan_evaluation(problems::load("norms/reducescatter_fused_rmsnorm"), {"odd"}, "", 2).sizes[0].ranks[0];
  EXPECT_EQ(rs.inputs[0].init.row, 1001);  // "length": "H" of a flat tensor
}

// Expressions are checked where they have values: a negative std, or high <= low, at some
// preset is a usage error naming the input.
TEST(Plan, InitExpressionsOutOfRangeAtAPresetAreUsageErrors) {
  auto spec_with = [](nlohmann::json init) {
    nlohmann::json j = nlohmann::json::parse(R"json({
      "world_size": {"min": 1, "max": 8}, "sizes": [{"name": "s", "dims": {"N": 8}}],
      "inputs": [{"name": "x", "dtype": "f32", "shape": ["N"]}],
      "outputs": [{"name": "y", "dtype": "f32", "shape": ["N"]}]})json");
    j["inputs"][0]["init"] = init;
    return problems::parse_spec(j, "cat/p", "/tmp/p");
  };
  const auto ok = preset_plan(problems::resolve(spec_with({{"std", "2 - W"}, {"mean", "N"}}), "s", "", 1, 0));
  EXPECT_DOUBLE_EQ(ok.inputs[0].init.b, 1);
  EXPECT_DOUBLE_EQ(ok.inputs[0].init.a, 8);
  EXPECT_THROW(preset_plan(problems::resolve(spec_with({{"std", "2 - W"}}), "s", "", 4, 0)), UsageError);
  EXPECT_THROW(preset_plan(problems::resolve(spec_with({{"dist", "uniform"}, {"low", "W"}, {"high", 2}}), "s", "", 2, 0)),
               UsageError);
  EXPECT_THROW(preset_plan(problems::resolve(spec_with({{"rows", {{"length", "N - 8"}, {"zero_every", 2}}}}), "s", "", 2, 0)),
               UsageError);
}

}  // namespace
}  // namespace mgk::eval
