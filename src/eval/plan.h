// A problem made concrete for one evaluation, resolved once by the command that evaluates
// (mgk eval, tune, generate, bench) and passed down: for every size preset, what every rank
// gets (wire::PresetPlan) and the slowest rank's cost for the roofline, at the evaluation's
// world and at the worlds of its structure check. Nothing below the command resolves a
// problem again; the harness never reads problem.json, it gets these plans.
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

// The evaluation repeated, checked and not timed, at a world where the problem's structure
// exists (problems::StructureCheck, for a world that lacks it): the presets at that world,
// without `large` where others are left (ranks sharing a GPU each hold a large preset's
// buffers; a layout bug shows at any size).
struct StructurePlan {
  int world = 0;
  std::vector<SizePlan> sizes;
};

struct EvalPlan {
  problems::Spec spec;
  std::string dtype;  // as chosen ("" = the problem's default)
  int world_size = 0;
  std::vector<SizePlan> sizes;
  std::vector<StructurePlan> structure;  // the structure check's worlds above world_size

  std::vector<std::string> size_names() const;
};

// UsageError for an unknown problem, size preset, dtype, or a world size the problem does
// not run at. `sizes` empty: the problem's default presets.
EvalPlan plan_evaluation(const problems::Spec& problem, const std::vector<std::string>& sizes, const std::string& dtype,
                         int world_size);

// One rank's plan of one preset (the tolerance's factor evaluated at this world size).
wire::PresetPlan preset_plan(const problems::Resolved& r);

}  // namespace mgk::eval
