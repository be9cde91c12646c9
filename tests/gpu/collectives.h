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

// Every file under tests/bad_candidates/ and the verdict the evaluator must give it (the
// README there says why each is bad). `failure_kind` is the last size's (for incorrect),
// `part` a piece of the failure (incorrect) or of the message (other verdicts).
struct BadCandidate {
  const char* file;
  const char* verdict;
  const char* failure_kind;
  const char* part;
  const char* sizes;        // what to evaluate at; "" = the problem's defaults
  bool shared_gpu_catches;  // ranks sharing one GPU find it too (untimed, taking turns)
};
inline const BadCandidate kBadCandidates[] = {
    {"wrong_values", "incorrect", "mismatch", "output mismatch", "small,odd", true},
    {"all_zeros", "incorrect", "mismatch", "output mismatch", "small,odd", true},
    {"constant", "incorrect", "mismatch", "output mismatch", "small,odd", true},
    {"modifies_input", "incorrect", "modified_input", "modified its input 'x'", "small,odd", true},
    {"one_rank_unwritten", "incorrect", "mismatch", "output mismatch", "small,odd", true},
    {"partial_write", "incorrect", "mismatch", "output mismatch", "small,odd", true},
    {"side_stream", "incorrect", "incomplete", "not joined back", "medium", true},
    {"forgets_tail", "incorrect", "mismatch", "output mismatch", "", true},
    // Reads a peer's inputs before the peer's call began: shows only when ranks run at once.
    {"no_start_sync", "incorrect", "mismatch", "back to back", "small,odd", false},
    // Skips work in timed calls: needs timing, so a GPU per rank.
    {"skips_unchecked", "incorrect", "mismatch", "in timed call", "small", false},
    {"uses_nccl", "compile_error", "", "uses_nccl.cu:9: 'ncclAllReduce': candidates may not call NCCL", "small", true},
    {"pasted_nccl", "compile_error", "", "pasted_nccl.cu:12: 'ncclAllReduce': candidates may not call NCCL", "small", true},
    {"opens_socket", "compile_error", "", "imports 'socket': candidates may not use sockets", "small", true},
    {"crash", "runtime_error", "", "illegal memory access", "small", true},
    {"hang", "timeout", "", "candidate trial 1/2 at size small", "small", true},
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
