#include "eval/plan.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "common/expr.h"
#include "problems/catalog.h"

namespace mgk::eval {

namespace {

// `vars`: the preset's dims, W and R, which a tolerance factor may use (a K-term dot
// product's bound grows with K, a sum over ranks with W).
wire::TensorPlan tensor_plan(const problems::ResolvedTensor& t, bool output, const expr::Vars& vars) {
  wire::TensorPlan p;
  p.name = t.name;
  p.dtype = t.dtype;
  p.shape.assign(t.shape.begin(), t.shape.end());
  p.numel = t.numel;
  p.symmetric = t.symmetric;
  p.alloc_bytes = uint64_t(t.symmetric ? t.max_bytes_over_ranks : t.numel * problems::dtype_bytes(t.dtype));
  p.in_place_of = t.in_place_of;
  if (!output) {
    const auto& init = t.spec->init;
    p.init.dist = init.dist == "uniform"   ? wire::Dist::kUniform
                  : init.dist == "randint" ? wire::Dist::kRandint
                  : init.dist == "zipf"    ? wire::Dist::kZipf
                                           : wire::Dist::kNormal;
    p.init.exponent = init.exponent;
    p.init.a = init.a_expr.empty() ? init.a : expr::evaluate(init.a_expr, vars);
    p.init.b = init.b_expr.empty() ? init.b : expr::evaluate(init.b_expr, vars);
    // Parameters given as expressions are checked here, where they have values.
    const std::string where = "input '" + t.name + "': init parameters " + std::to_string(p.init.a) + ", " +
                              std::to_string(p.init.b) + " (from '" + init.a_expr + "', '" + init.b_expr + "'): ";
    if (!std::isfinite(p.init.a) || !std::isfinite(p.init.b)) throw UsageError(where + "must be finite");
    if (p.init.dist == wire::Dist::kNormal && p.init.b < 0) throw UsageError(where + "a negative std");
    if (p.init.dist != wire::Dist::kNormal && !(p.init.b > p.init.a)) throw UsageError(where + "'high' must exceed 'low'");
    if (init.zero_every || init.tiny_every || init.massive_every) {
      p.init.row = expr::evaluate_count(init.row_length, vars);
      if (p.init.row < 1) throw UsageError(where + "rows.length '" + init.row_length + "' must be at least 1");
      p.init.zero_every = init.zero_every;
      p.init.tiny_every = init.tiny_every;
      p.init.tiny = init.tiny;
      p.init.massive_every = init.massive_every;
      p.init.massive = init.massive;
    }
    return p;
  }
  const auto& tol = t.spec->tolerance;
  switch (tol.kind) {
    case problems::ToleranceKind::kExact: p.check.kind = wire::CheckKind::kExact; break;
    case problems::ToleranceKind::kRounding:
      p.check.kind = wire::CheckKind::kRounding;
      p.check.factor = expr::evaluate(tol.factor, vars);
      p.check.unit_roundoff = problems::unit_roundoff(t.dtype);
      break;
    case problems::ToleranceKind::kAllclose:
      p.check.kind = wire::CheckKind::kAllclose;
      p.check.atol = tol.atol;
      p.check.rtol = tol.rtol;
      break;
  }
  return p;
}

}  // namespace

wire::PresetPlan preset_plan(const problems::Resolved& r) {
  wire::PresetPlan p;
  for (const auto& [k, v] : r.dims)
    if (k != "R") p.dims.push_back({k, int64_t(v)});
  for (const auto& t : r.inputs) p.inputs.push_back(tensor_plan(t, false, r.dims));
  for (const auto& t : r.outputs) p.outputs.push_back(tensor_plan(t, true, r.dims));
  return p;
}

namespace {

std::vector<SizePlan> size_plans(const problems::Spec& spec, const std::vector<std::string>& sizes,
                                 const std::string& dtype, int world_size) {
  std::vector<SizePlan> plans;
  for (const auto& size : sizes) {
    SizePlan sp;
    sp.size = size;
    for (int r = 0; r < world_size; ++r) {
      problems::Resolved res = problems::resolve(spec, size, dtype, world_size, r);
      sp.ranks.push_back(preset_plan(res));
      sp.max_cost.flops = std::max(sp.max_cost.flops, res.cost.flops);
      sp.max_cost.hbm_bytes = std::max(sp.max_cost.hbm_bytes, res.cost.hbm_bytes);
      sp.max_cost.link_bytes = std::max(sp.max_cost.link_bytes, res.cost.link_bytes);
    }
    plans.push_back(std::move(sp));
  }
  return plans;
}

// The evaluation's presets without `large`, unless that is all of them (StructurePlan).
std::vector<std::string> structure_sizes(const std::vector<std::string>& sizes) {
  std::vector<std::string> out;
  for (const auto& s : sizes)
    if (s != "large") out.push_back(s);
  return out.empty() ? sizes : out;
}

}  // namespace

std::vector<std::string> EvalPlan::size_names() const {
  std::vector<std::string> names;
  for (const auto& s : sizes) names.push_back(s.size);
  return names;
}

EvalPlan plan_evaluation(const problems::Spec& problem, const std::vector<std::string>& sizes, const std::string& dtype,
                         int world_size) {
  EvalPlan plan;
  plan.spec = problem;
  plan.dtype = dtype;
  plan.world_size = world_size;
  const std::vector<std::string>& names = sizes.empty() ? problem.default_sizes : sizes;
  plan.sizes = size_plans(problem, names, dtype, world_size);
  for (int world : problem.structure_check.worlds)
    if (world > world_size)
      plan.structure.push_back({world, size_plans(problem, structure_sizes(names), dtype, world)});
  return plan;
}

}  // namespace mgk::eval
