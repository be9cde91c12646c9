// The compute problems of the suite (everything but the pure collectives) held to
// ../shared/suite.md on the CPU: the presets (ParallelKernelBench's dims as `pkb`, a tail in
// the defaults), shapes from W at any world size with no empty tensor, described tensors,
// rounding factors of at least 2, a cost model that evaluates, and a harness footprint
// that fits one GPU with eight ranks sharing it.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include <cmath>

#include "common/expr.h"
#include "problems/catalog.h"
#include "problems/resolve.h"

namespace mgk::problems {
namespace {

std::vector<std::string> compute_problems() {
  std::vector<std::string> out;
  for (const auto& n : list_names())
    if (n.rfind("collectives/", 0) != 0) out.push_back(n);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(Suite, ComputeProblemsHaveEveryPresetAndDescribeEveryTensor) {
  const auto names = compute_problems();
  ASSERT_GE(names.size(), 10u);
  for (const auto& n : names) {
    SCOPED_TRACE(n);
    const Spec s = load(n);
    EXPECT_TRUE(s.pkb_id.has_value());
    for (const char* size : {"tiny", "small", "pkb", "medium", "large", "odd"}) EXPECT_TRUE(s.sizes.count(size)) << size;
    for (const char* size : {"pkb", "large", "odd"}) EXPECT_TRUE(has(s.default_sizes, size)) << size;
    for (const auto* group : {&s.inputs, &s.outputs})
      for (const auto& t : *group) EXPECT_FALSE(t.description.empty()) << t.name;
    EXPECT_TRUE(std::filesystem::exists(s.statement_path()));
  }
}

// Shapes come from W at run time: any world size the spec allows resolves on every rank,
// with no empty tensor, a rounding factor of at least 2 and a cost that is a number.
// Problems whose presets give some rank no rows by design: variable-count exchanges, whose
// counts must be "uneven and sometimes zero" (issue 37). Their outputs are never empty.
const std::set<std::string> kEmptyInputsByDesign = {"gnn/negative_scoring", "sort/distributed_sample_sort"};

TEST(Suite, ComputeProblemsResolveAtAnyWorldSizeWithNoEmptyTensor) {
  for (const auto& n : compute_problems()) {
    const Spec s = load(n);
    const bool empty_inputs_ok = kEmptyInputsByDesign.count(n) > 0;
    for (int w : {2, 3, 4, 5, 7, 8, 16, 72}) {
      if (w < s.min_world || w > s.max_world) continue;
      for (const auto& size : s.size_names)
        for (int r = 0; r < w; ++r) {
          SCOPED_TRACE(n + " size " + size + " at W=" + std::to_string(w) + " rank " + std::to_string(r));
          const Resolved res = resolve(s, size, "", w, r);
          for (const auto& t : res.inputs)
            if (!empty_inputs_ok) EXPECT_GT(t.numel, 0) << t.name;
          for (const auto& t : res.outputs) EXPECT_GT(t.numel, 0) << t.name;
          for (const auto& o : res.outputs) {
            if (o.spec->tolerance.kind == ToleranceKind::kRounding) {
              EXPECT_GE(expr::evaluate(o.spec->tolerance.factor, res.dims), 2.0) << o.name;
            }
          }
          EXPECT_GT(res.cost.hbm_bytes, 0);
          EXPECT_GT(res.cost.link_bytes, 0);
          if (has(s.tags, "gemm")) {
            EXPECT_GT(res.cost.flops, 0);
          }
        }
    }
  }
}

// What the harness holds per rank for a preset: two input sets, the outputs and their
// snapshots, and the oracle's double per output element with a float scale. At eight ranks
// sharing one 141 GB GPU (the shared-GPU tests) every preset must leave room for the
// oracles' fp64 scratch and the candidates' workspace.
TEST(Suite, TheLargestPresetFitsEightRanksOnOneGpu) {
  for (const auto& n : compute_problems()) {
    const Spec s = load(n);
    for (const auto& size : s.size_names) {
      double total = 0;
      for (int r = 0; r < 8; ++r) {
        const Resolved res = resolve(s, size, "", 8, r);
        for (const auto& t : res.inputs) total += 2.0 * t.numel * dtype_bytes(t.dtype);
        for (const auto& t : res.outputs) total += t.numel * (2.0 * dtype_bytes(t.dtype) + 12);
      }
      EXPECT_LT(total, 48e9) << n << " size " << size;
    }
  }
}

// The `pkb` preset has ParallelKernelBench's default dims (M = N = 1024 and the hard-coded
// K = 512, H = 256, F = 512, 16 x 16 x 8 x 64 attention shapes) at its W = 8.
TEST(Suite, PkbPresetsHaveParallelKernelBenchsDims) {
  struct Want {
    const char* problem;
    std::map<std::string, double> dims;
  };
  const Want wants[] = {
      {"norms/layernorm_backward", {{"M", 1024}, {"N", 1024}}},
      {"norms/tp_rms_norm", {{"M", 1024}, {"NL", 1024}}},
      {"tp/embedding_lookup", {{"T", 1024}, {"D", 1024}}},
      {"tp/allgather_gemm_AT", {{"M", 1024}, {"K", 512}, {"KL", 64}, {"N", 1024}}},
      {"tp/allgather_gemm", {{"M", 1024}, {"K", 512}, {"KL", 64}, {"N", 1024}}},
      {"tp/gemm_allreduce", {{"M", 1024}, {"K", 512}, {"N", 1024}}},
      {"tp/gemm_allgather", {{"M", 1024}, {"K", 512}, {"N", 1024}, {"NL", 128}}},
      {"tp/combined_sharded_gemms", {{"MR", 1024}, {"ML", 128}, {"H", 256}, {"HL", 32}, {"F", 512}}},
      {"tp/gemm_reducescatter", {{"M", 1024}, {"ML", 128}, {"K", 512}, {"KL", 64}, {"N", 1024}}},
      {"tp/rope_allgather", {{"B", 16}, {"SL", 2}, {"S", 16}, {"NH", 8}, {"D", 64}}},
      {"dp/ddp", {{"NL", 128}, {"DI", 256}, {"H", 512}, {"DO", 256}}},
      {"dp/zero1_optimizer_shard", {{"NL", 128}, {"DI", 256}, {"H", 512}, {"DO", 256}, {"NUMEL", 262912}, {"P", 32864}}},
      {"dp/zero2_optimizer_shard_grad", {{"NL", 128}, {"DI", 256}, {"H", 512}, {"DO", 256}, {"P", 32864}}},
      {"dp/fused_adam_grad_unshard_allgather", {{"P", 4096}}},
      {"dp/fsdp_step_e2e", {{"NL", 128}, {"DI", 256}, {"H", 512}, {"DO", 256}, {"NUMEL", 262912}, {"P", 32864}}},
      {"dp/fsdp_and_tp", {{"NTP", 2}, {"NF", 4}, {"BL", 512}, {"D", 256}, {"DS", 64}, {"DFF", 1024}, {"FL", 512}}},
      {"losses/load_balancing_loss_fn", {{"M", 1024}, {"E", 8}, {"K", 2}}},
      {"dp/quantized_grad_allreduce", {{"N", 1048576}, {"B", 128}}},
      {"norms/reducescatter_fused_rmsnorm", {{"M", 1024}, {"H", 128}, {"ROWS", 128}}},
      {"tp/gemv_decode", {{"T", 1}, {"H", 1024}, {"VL", 1024}, {"V", 8192}}},
      {"losses/importance_sampling_loss", {{"M", 1024}, {"N", 1024}, {"V", 32000}}},
      {"quant/blocked_fp8_quantize", {{"M", 1024}, {"N", 1024}, {"NB", 8}}},
      {"quant/blocked_fp8_dequantize", {{"M", 1024}, {"N", 1024}, {"NBLK", 8192}}},
      {"dp/clip_grad_norm_no_ep", {{"M", 1024}, {"N", 1024}}},
      {"moe/moe_token_preprocess", {{"M", 1024}, {"K", 2}, {"L", 1}, {"E", 8}}},
      {"moe/moe_all2all_primitive", {{"M", 1024}, {"C", 128}, {"N", 1024}}},
      {"moe/moe_pre_all2all", {{"M", 1024}, {"N", 1024}, {"K", 2}, {"E", 8}, {"L", 1}}},
      {"moe/moe_post_all2all", {{"M", 1024}, {"N", 1024}, {"K", 2}, {"E", 8}, {"L", 1}}},
      {"moe/moe_epgroupgemm_lora_backward", {{"RK", 8}, {"N", 1024}}},
      // MoE: M tokens a rank, hidden N, MLP inter 128, top-2; E = 8 / W / 2W / W/2 experts.
      {"moe/fused_moe_fwd", {{"M", 1024}, {"N", 1024}, {"I", 128}, {"E", 8}, {"EL", 1}, {"K", 2}}},
      {"moe/fused_moe_fwd_lora", {{"M", 1024}, {"N", 1024}, {"I", 128}, {"E", 8}, {"EL", 1}, {"K", 2}, {"RK", 8}}},
      {"moe/moe_ep_balanced", {{"M", 1024}, {"N", 1024}, {"I", 128}, {"E", 8}, {"EL", 1}, {"K", 2}}},
      {"moe/moe_ep_wide", {{"M", 1024}, {"N", 1024}, {"I", 128}, {"E", 16}, {"EL", 2}, {"K", 2}}},
      {"moe/moe_ep_narrow", {{"M", 1024}, {"N", 1024}, {"I", 128}, {"E", 4}, {"G", 4}, {"K", 2}}},
      {"sp/ulysses_all_to_all_tensor_primitive", {{"M", 1024}, {"ML", 128}, {"N", 1024}}},
      {"sp/ulysses_all_gather_into_tensor_primitive", {{"M", 1024}, {"N", 1024}}},
      {"sp/ulysses_all_gather_variable_primitive", {{"M", 1024}, {"DM", 0}, {"N", 1024}, {"MT", 8192}}},
      {"sp/ulysses_gather_seq_scatter_heads", {{"B", 16}, {"T", 16}, {"HL", 1}, {"H", 8}, {"D", 64}}},
      {"sp/ulysses_gather_heads_scatter_seq", {{"B", 16}, {"T", 16}, {"TL", 2}, {"H", 8}, {"D", 64}}},
      {"sp/ulysses_gather_seq_scatter_heads_qkv", {{"B", 16}, {"T", 16}, {"HL", 1}, {"H", 8}, {"D", 64}}},
      {"dp/clip_grad_norm_ep", {{"M", 1024}, {"N", 1024}, {"EP", 4}}},
      {"quant/fp8_reduce_scatter_grads", {{"P", 4096}, {"H", 16}}},
      {"quant/fp8_allgather_params", {{"P", 4096}, {"H", 16}}},
      {"attention/ring_attention", {{"B", 16}, {"S", 2}, {"T", 16}, {"H", 8}, {"D", 64}}},
      {"attention/ulysses_attention_e2e", {{"B", 16}, {"S", 2}, {"T", 16}, {"HL", 1}, {"H", 8}, {"D", 64}, {"E", 512}}},
      {"attention/ring_attention_tp",
       {{"TP", 2}, {"CP", 4}, {"B", 16}, {"S", 4}, {"T", 16}, {"HL", 4}, {"NH", 8}, {"D", 64}, {"DM", 512}}},
      {"attention/ring_attention_pp",
       {{"PP", 2}, {"CP", 4}, {"B", 16}, {"S", 4}, {"T", 16}, {"NH", 8}, {"D", 64}, {"E", 512}, {"DM", 512}}},
      {"attention/ring_attention_backward_dp",
       {{"DP", 2}, {"CP", 4}, {"B", 16}, {"S", 4}, {"T", 16}, {"H", 8}, {"D", 64}}},
      {"gnn/feature_exchange_all2all", {{"A", 128}, {"B", 0}, {"E", 0}, {"H", 128}, {"F", 768}, {"S0", 1024}, {"TR", 1024}}},
      {"gnn/feature_exchange_all2all_backward",
       {{"A", 128}, {"B", 0}, {"E", 0}, {"H", 128}, {"SEED", 512}, {"S0", 1024}, {"TR", 1024}}},
      {"gnn/negative_scoring", {{"P", 128}, {"PD", 1}, {"S", 0}, {"K", 1000}, {"PT", 1031}}},
      {"conv/hyena_conv1d_boundary_exchange", {{"B", 1}, {"C", 1024}, {"L", 1024}}},
      {"losses/openclip_contrastive_loss", {{"B", 128}, {"D", 1024}, {"SCALE", 10}, {"NEG_BIAS", 10}}},
      {"gnn/sparse_embedding_all2all", {{"NA", 1024}, {"ND", 0}, {"H", 128}, {"N", 100000}, {"RT", 8192}}},
      {"recsys/kjt_all2all", {{"B", 512}, {"LMIN", 5}, {"LMAX", 20}, {"F", 15}}},
      {"conv/hyena_forward_cp", {{"B", 1}, {"C", 1024}, {"LC", 1024}, {"K", 4096}}},
      {"conv/spherical_disco_conv", {{"AZ", 2}, {"NP", 4}, {"B", 32}, {"C", 8}, {"COUT", 8}, {"K", 3}, {"NLAT", 128}, {"NLON", 256}}},
      {"render/gsplat_projection_all2all", {{"GA", 1024}, {"GD", 0}, {"CL", 1}, {"IW", 512}, {"IH", 512}, {"RT", 8192}}},
      {"sort/distributed_sample_sort", {{"N", 128}, {"ND", 0}, {"Z", 0}, {"A", 50}, {"SPAN", 100}, {"SH", 128}}},
      {"tp/tp_muon_orthogonalization", {{"M", 512}, {"NL", 64}}},  // N = 512 at W = 8
      {"losses/vocab_parallel_cross_entropy", {{"T", 8192}, {"VL", 64}, {"V", 512}}},
      {"gnn/neighbor_sampling", {{"N", 10000}, {"SA", 512}, {"SD", 0}, {"F1", 10}, {"F2", 5}}},  // degrees power-law (PKB: 16 each)
      {"gnn/sparse_feature_fetch_projection", {{"QA", 20000}, {"QD", 0}, {"D", 256}}},  // N is not PKB's
      {"dp/deepmd_kalman_filter_optimizer", {{"NB", 8}, {"B", 1024}}},
      {"fft/distributed_rfft2", {{"B", 16}, {"HL", 128}, {"WL", 128}, {"H", 1024}, {"WD", 1024}, {"NF", 513}}},
      {"fft/distributed_irfft2",
       {{"B", 2}, {"C", 10}, {"HL", 90}, {"WL", 180}, {"H", 720}, {"WD", 1440}, {"NF", 721}}},
  };
  for (const auto& w : wants) {
    SCOPED_TRACE(w.problem);
    const expr::Vars dims = size_dims(load(w.problem), "pkb", 8);
    for (const auto& [k, v] : w.dims) EXPECT_EQ(dims.at(k), v) << k;
  }
}

// dp/fsdp_and_tp's grid as ParallelKernelBench picks it: NTP the smallest divisor t >= 2 of W
// with W / t >= 2, else 1; NF = W / NTP (every preset shares the expressions).
TEST(Suite, FsdpAndTpGridFollowsParallelKernelBench) {
  const Spec s = load("dp/fsdp_and_tp");
  const std::map<int, std::pair<double, double>> want = {{2, {1, 2}},  {3, {1, 3}},  {4, {2, 2}},  {6, {2, 3}},
                                                         {7, {1, 7}},  {8, {2, 4}},  {9, {3, 3}},  {25, {5, 5}},
                                                         {49, {7, 7}}, {71, {1, 71}}, {72, {2, 36}}};
  for (const auto& size : s.size_names)
    for (const auto& [w, grid] : want) {
      SCOPED_TRACE(size + " at W=" + std::to_string(w));
      const expr::Vars dims = size_dims(s, size, w);
      EXPECT_EQ(dims.at("NTP"), grid.first);
      EXPECT_EQ(dims.at("NF"), grid.second);
    }
}

// attention/ring_attention_pp's grid as ParallelKernelBench builds it: PP = min(2, W) stages
// of CP = W / PP ranks (PKB asserts W % PP == 0; an odd W here is one stage of W).
TEST(Suite, RingAttentionPpGridFollowsParallelKernelBench) {
  const Spec s = load("attention/ring_attention_pp");
  const std::map<int, std::pair<double, double>> want = {{2, {2, 1}}, {3, {1, 3}}, {4, {2, 2}},  {5, {1, 5}},
                                                         {8, {2, 4}}, {9, {1, 9}}, {16, {2, 8}}, {72, {2, 36}}};
  for (const auto& size : s.size_names)
    for (const auto& [w, grid] : want) {
      SCOPED_TRACE(size + " at W=" + std::to_string(w));
      const expr::Vars dims = size_dims(s, size, w);
      EXPECT_EQ(dims.at("PP"), grid.first);
      EXPECT_EQ(dims.at("CP"), grid.second);
      EXPECT_EQ(dims.at("T"), dims.at("CP") * dims.at("S"));
    }
}

// The dims that size a sub-group of ranks (context, data, pipeline, tensor parallel, FSDP,
// expert parallel, an EP group) and what else needs a larger world to show.
const char* const kGroupDims[] = {"CP", "DP", "PP", "TP", "NTP", "NF", "EP", "G"};
const std::map<std::string, std::string> kStructure = {
    {"attention/ring_attention_backward_dp", "CP >= 2 && DP >= 2"},
    {"attention/ring_attention_pp", "PP >= 2 && CP >= 2"},
    {"attention/ring_attention_tp", "TP >= 2 && CP >= 2"},
    {"dp/fsdp_and_tp", "NTP >= 2 && NF >= 2"},
    {"dp/clip_grad_norm_ep", "EP >= 2 && W / EP >= 2"},
    {"moe/moe_ep_balanced", "E > K"},  // top-K of more experts than K: a choice, weights that do not sum to 1
    {"moe/moe_ep_narrow", "G >= 2 && E > K"},
    // At W = 2, (r + c) mod W = (r - c) mod W and (W - c) mod W = c: the shift's direction and
    // the mirrored chunk cannot show.
    {"gnn/feature_exchange_all2all", "W >= 3"},
    {"gnn/feature_exchange_all2all_backward", "W >= 3"},
    {"conv/hyena_conv1d_boundary_exchange", "W >= 3"},  // a middle rank: a halo from each side
    // At W = 2 a rank's two ring neighbours are one rank (and W - 1 is odd): a ring that takes
    // the shard from one side only cannot show.
    {"losses/openclip_contrastive_loss", "W >= 3"},
    // At W = 2 one latitude block (no polar sum); W = 3 (AZ = 1) sums three, W = 4 has two
    // azimuth and two polar groups (strided and contiguous groups differ only there).
    {"conv/spherical_disco_conv", "NP >= 2"},
};

// A problem whose sub-groups have one member at its smallest world (or whose routing keeps
// every expert there) declares a structure check, and at its first structure world every
// preset has the structure and resolves on every rank. One whose smallest world has the
// structure declares none (it would cost a second group of ranks for nothing).
TEST(Suite, WorldsWhereTheStructureExistsAreCheckedAndResolve) {
  for (const auto& n : list_names()) {
    SCOPED_TRACE(n);
    const Spec s = load(n);
    bool degenerate_at_min = false;
    for (const auto& size : s.size_names) {
      const expr::Vars dims = size_dims(s, size, s.min_world);
      for (const char* g : kGroupDims) degenerate_at_min |= dims.count(g) && dims.at(g) < 2;
      if (kStructure.count(n)) degenerate_at_min |= expr::evaluate(kStructure.at(n), dims) == 0;
    }
    if (!degenerate_at_min) {
      EXPECT_TRUE(s.structure_check.worlds.empty()) << "a structure check where the smallest world has the structure";
      continue;
    }
    ASSERT_FALSE(s.structure_check.worlds.empty()) << "a sub-group has one member at W = " << s.min_world
                                                   << ": declare \"structure_check\" in problem.json";
    ASSERT_TRUE(kStructure.count(n)) << "say in kStructure what the structure world must have";
    const int w = s.structure_check.worlds.front();
    for (const auto& size : s.size_names) {
      SCOPED_TRACE(size + " at W=" + std::to_string(w));
      expr::Vars dims = size_dims(s, size, w);
      dims["W"] = w;
      EXPECT_NE(expr::evaluate(kStructure.at(n), dims), 0) << kStructure.at(n);
      for (int r = 0; r < w; ++r) EXPECT_NO_THROW(resolve(s, size, "", w, r)) << "rank " << r;
    }
  }
}

// An input parameter given as an expression (problem.json "std": "...") at one preset and W.
double init_std(const Spec& s, const std::string& input, const std::string& size, int w) {
  for (const auto& t : s.inputs)
    if (t.name == input) return t.init.b_expr.empty() ? t.init.b : expr::evaluate(t.init.b_expr, size_dims(s, size, w));
  ADD_FAILURE() << "no input " << input;
  return 0;
}

// The clip-grad-norm problems clip at some default presets and not at others (a kernel that
// always scales by max_norm / norm fails where the norm is below max_norm = 1), and their
// expected norm is never within 10% of max_norm, where fp32 reduction orders could branch
// differently from the exact norm.
TEST(Suite, ClipGradNormPresetsClipAndDoNotClipAndKeepTheNormAwayFromMaxNorm) {
  for (const std::string name : {"dp/clip_grad_norm_no_ep", "dp/clip_grad_norm_ep"}) {
    SCOPED_TRACE(name);
    const Spec s = load(name);
    const bool ep = name == "dp/clip_grad_norm_ep";
    for (int w : {2, 3, 4, 5, 8, 16, 72}) {
      bool below = false, above = false;
      for (const auto& size : s.size_names) {
        const expr::Vars d = size_dims(s, size, w);
        const double sd = init_std(s, ep ? "g" : "g0", size, w), mn = d.at("M") * d.at("N");
        // The expected squared norm: every rank's M N elements of each gradient (e' = e / EP).
        const double sq = ep ? w * mn * sd * sd * (1 + 1 / (d.at("EP") * d.at("EP"))) : 3 * w * mn * sd * sd;
        const double norm = std::sqrt(sq);
        EXPECT_GT(std::fabs(norm - 1), 0.1) << size << " at W=" << w << ": norm " << norm;
        if (has(s.default_sizes, size)) (norm < 1 ? below : above) = true;
      }
      EXPECT_TRUE(below && above) << "W=" << w;
    }
  }
}

}  // namespace
}  // namespace mgk::problems
