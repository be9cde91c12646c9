// `mgk generate`: one problem, one model, one agent session; a line per turn, then the best
// kernel's path and the attempt id (--json: the same as JSON lines). --resume continues a
// stored attempt; --dry-run shows the first prompt and calls nothing. With fewer GPUs than
// ranks the ranks share them: kernels are checked, not timed, and the model is told so.
#pragma once
#include "common/error.h"
#include "generate/request.h"
#include "store/store.h"

namespace mgk::generate {

// The exit code says how the session ended (a correct kernel, a limit, an interrupt, ...).
ExitCode run(Request r, store::Store& store);

}  // namespace mgk::generate
