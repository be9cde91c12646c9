// The table `mgk history --runs` prints: one line per run of any kind, newest first, with
// the id `mgk report` and `mgk show --run` take.
#pragma once
#include <string>
#include <vector>

#include "store/records.h"

namespace mgk::store {

// Columns: RUN, WHEN (UTC), KIND, MODEL, PROBLEMS ("8 x 2": problems x samples for a bench
// run, else the problem), STATUS, PASS@1 (a bench run's, from its stored summary: "not run"
// when it only compiled, "-" for other kinds or before its end), COST, NAME (a bench run's
// --name, "-" for none). "nothing matches" when empty.
std::string render_runs_table(const std::vector<RunRecord>& runs);

}  // namespace mgk::store
