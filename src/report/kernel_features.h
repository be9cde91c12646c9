// Which of the design choices the talk and the primitives guide describe a kernel made,
// read from its source text: the transfer mechanism (register-level loads/stores on peer
// pointers, TMA bulk copies, the copy engine), the overlap pattern (warp specialisation
// inside an SM, partitioning SMs by role, chunked pipelines, side streams) and how ranks
// synchronise (acquire/release flags, Lamport slots, grid barriers, host barriers). A
// heuristic on the text with comments removed: it sees what the code names, both the
// primitives' API and the raw CUDA/PTX spellings, not what actually ran.
#pragma once
#include <string>
#include <vector>

namespace mgk::report {

struct KernelFeatures {
  std::vector<std::string> transfer;  // "register", "tma", "copy_engine"
  std::vector<std::string> overlap;   // "warp_specialization", "sm_partition", "chunk_pipeline", "streams"
  std::vector<std::string> sync;      // "flags", "lamport", "grid_barrier", "host_barrier"
};

KernelFeatures detect_features(const std::string& source);

// The names each list may hold, in display order (for tables with a column per name).
const std::vector<std::string>& transfer_names();
const std::vector<std::string>& overlap_names();
const std::vector<std::string>& sync_names();

}  // namespace mgk::report
