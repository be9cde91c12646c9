// `mgk export RUN DIR`: a run, whole, as files to share without the store: every attempt's
// conversation (Markdown as `mgk show` prints it, and JSON with every turn's messages, reply,
// feedback and evaluation), every kernel it proposed, the run's evaluations, and for a bench
// run its report (Markdown, JSON, HTML). The folder appears whole or not at all: it is
// written beside DIR under another name and renamed when complete.
#pragma once
#include <cstdint>
#include <filesystem>

#include "store/store.h"

namespace mgk::report {

struct ExportCounts {
  int attempts = 0, kernels = 0, evaluations = 0;
  bool with_report = false;
};

// Throws UsageError for an unknown run and for a DIR that exists and is not an empty folder.
ExportCounts export_run(store::Store& store, int64_t run_id, const std::filesystem::path& dir);

}  // namespace mgk::report
