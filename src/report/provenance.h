// What a run was made with, gathered from what its rows hold: the model and how it was
// sampled, the mode, turns and prompt version of its attempts, its problems and worlds, and
// what its evaluations ran on (mgk, nvcc, CUDA driver and runtime, NCCL, GPU model and count,
// architecture, calibration, isolation: eval/provenance.h). A field with one value is that
// value; one whose rows disagree lists every value seen (a run resumed on another machine
// says so); one no row holds is null (evaluations stored before mgk recorded it).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/run_data.h"

namespace mgk::report {

nlohmann::json run_provenance(const RunData& data);

// The provenance as "name: value" lines, in a fixed order, for the text and HTML reports.
std::vector<std::string> provenance_lines(const nlohmann::json& provenance);

}  // namespace mgk::report
