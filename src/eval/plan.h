// A problem made concrete for one evaluation, resolved once: for every size preset, what
// every rank gets (wire::PresetPlan) and the slowest rank's cost for the roofline. The
// harness never reads problem.json; it gets these plans.
#pragma once
#include <string>
#include <vector>

#include "problems/resolve.h"
#include "problems/spec.h"
#include "wire/protocol.h"

namespace mgk::eval {

struct SizePlan {
  std::string size;
  std::vector<wire::PresetPlan> ranks;  // index = rank
  problems::ResolvedCost max_cost;      // the slowest rank's: what binds the roofline
};

struct EvalPlan {
  problems::Spec spec;
  std::string dtype;  // as chosen ("" = the problem's default)
  int world_size = 0;
  std::vector<SizePlan> sizes;
};

// UsageError for an unknown problem, size preset, dtype, or a world size the problem does
// not run at. `sizes` empty: the problem's default presets.
EvalPlan plan_evaluation(const problems::Spec& problem, const std::vector<std::string>& sizes, const std::string& dtype,
                         int world_size);

// One rank's plan of one preset (the tolerance's factor evaluated at this world size).
wire::PresetPlan preset_plan(const problems::Resolved& r);

}  // namespace mgk::eval
