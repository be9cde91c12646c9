// Tuning results as text: the table `mgk tune` prints at the end and for --show.
#pragma once
#include <string>
#include <vector>

#include "tune/trial.h"

namespace mgk::tune {

// "BLOCKS=8 CHUNK_KB=64" from canonical params JSON.
std::string describe_params(const std::string& params_json);

// Best first: ok trials by ascending time, then failures (stable within each).
void sort_best_first(std::vector<Trial>& trials);

// A fixed-width table, best first: rank, time (µs), status, configuration, and the message
// of failures. With `show_context`, also the size, world size and GPU of each trial (for
// --show, which lists trials of several contexts). `limit` > 0 keeps that many rows and
// says how many were left out.
std::string format_trials_table(std::vector<Trial> trials, std::size_t limit = 0,
                                bool show_context = false);

// One progress line for a trial: "[3/100] BLOCKS=8 CHUNK_KB=64: ok 41.20 us (cached)".
std::string progress_line(const Trial& trial, std::size_t index, std::size_t budget);

}  // namespace mgk::tune
