// What the GPU tests run (on GPUs of their own, and with ranks sharing one GPU): the eight
// collectives, and the experts' other code paths forced with their tuning knobs.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace mgk::test {

inline const char* const kCollectives[] = {"all_reduce", "all_gather", "broadcast",      "reduce",
                                           "scatter",    "gather",     "reduce_scatter", "all_to_all"};

inline const std::vector<std::pair<std::string, std::vector<std::string>>> kExpertVariants = {
    // two-shot / pull (what W > 2 uses for large messages), the flagged one-shot, and the
    // Lamport one-shot at every size with a short lag and every vector escaped
    {"all_reduce", {"-D", "ONE_SHOT_W2=0", "-D", "ONE_SHOT_MAX_KB=0", "-D", "BLOCKS=5", "-D", "UNROLL=2"}},
    {"all_reduce", {"-D", "LAMPORT=0"}},
    {"all_reduce", {"-D", "LAMPORT_LAG=1", "-D", "BLOCKS=5", "-D", "MGK_LAMPORT_ESCAPE_ALL=1"}},
    {"reduce_scatter", {"-D", "ONE_SHOT_W2=0", "-D", "ONE_SHOT_MAX_KB=0", "-D", "BLOCKS=5", "-D", "UNROLL=2"}},
    {"reduce_scatter", {"-D", "LAMPORT=0"}},
    {"reduce_scatter", {"-D", "LAMPORT_LAG=1", "-D", "BLOCKS=5", "-D", "MGK_LAMPORT_ESCAPE_ALL=1"}},
    // direct push by TMA, the flagged one-shot, Lamport up to 64 MB escaped, copy engine
    {"all_gather", {"-D", "ONE_SHOT_MAX_KB=0", "-D", "LAMPORT_MAX_KB=0", "-D", "MECH=1", "-D", "CE_MIN_MB=1048576"}},
    {"all_gather", {"-D", "LAMPORT_MAX_KB=0"}},
    {"all_gather", {"-D", "LAMPORT_MAX_KB=65536", "-D", "LAMPORT_LAG=1", "-D", "MGK_LAMPORT_ESCAPE_ALL=1"}},
    {"all_gather", {"-D", "LAMPORT_MAX_KB=0", "-D", "ONE_SHOT_MAX_KB=0", "-D", "CE_MIN_MB=1"}},
    {"all_to_all", {"-D", "ONE_SHOT_MAX_KB=0", "-D", "LAMPORT_MAX_KB=0", "-D", "MECH=1", "-D", "CE_MIN_MB=1048576"}},
    {"all_to_all", {"-D", "LAMPORT_MAX_KB=0"}},
    {"all_to_all", {"-D", "LAMPORT_MAX_KB=65536", "-D", "LAMPORT_LAG=1", "-D", "MGK_LAMPORT_ESCAPE_ALL=1"}},
    {"all_to_all", {"-D", "LAMPORT_MAX_KB=0", "-D", "ONE_SHOT_MAX_KB=0", "-D", "CE_MIN_MB=1"}},
    // rooted Lamport one-shots at every size, every vector escaped (credits exercised by
    // the back-to-back calls), and the rooted copy at small sizes
    {"broadcast", {"-D", "LAMPORT_MAX_KB=65536", "-D", "LAMPORT_LAG=2", "-D", "MGK_LAMPORT_ESCAPE_ALL=1"}},
    {"scatter", {"-D", "LAMPORT_MAX_KB=65536", "-D", "LAMPORT_LAG=2", "-D", "MGK_LAMPORT_ESCAPE_ALL=1"}},
    {"gather", {"-D", "LAMPORT_MAX_KB=65536", "-D", "LAMPORT_LAG=2", "-D", "MGK_LAMPORT_ESCAPE_ALL=1"}},
    {"reduce", {"-D", "LAMPORT_MAX_KB=65536", "-D", "LAMPORT_LAG=2", "-D", "MGK_LAMPORT_ESCAPE_ALL=1"}},
    {"reduce", {"-D", "LAMPORT_MAX_KB=0"}},
    {"broadcast", {"-D", "MECH=1", "-D", "CE_MIN_MB=1048576", "-D", "LAMPORT_MAX_KB=0"}},
    {"broadcast", {"-D", "CE_MIN_MB=1"}},
    {"scatter", {"-D", "CE_MIN_MB=1", "-D", "LAMPORT_MAX_KB=0"}},
    {"gather", {"-D", "MECH=1", "-D", "CE_MIN_MB=1048576", "-D", "LAMPORT_MAX_KB=0"}},
};

// The `mgk eval` arguments that run an expert variant.
inline std::vector<std::string> expert_variant_args(const std::vector<std::string>& defines) {
  std::vector<std::string> args = {"--expert"};
  args.insert(args.end(), defines.begin(), defines.end());
  return args;
}

// "problem -D NAME=VAL ...", to name a variant in a failure.
inline std::string variant_label(const std::string& problem, const std::vector<std::string>& defines) {
  std::string label = problem;
  for (const auto& d : defines) label += " " + d;
  return label;
}

}  // namespace mgk::test
