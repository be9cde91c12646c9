#include "report/kernel_features.h"

#include <regex>

#include "eval/compile.h"

namespace mgk::report {
namespace {

struct Rule {
  const char* name;
  const char* pattern;  // ECMAScript regex over the source without comments, strings kept
};

// Register-level: the primitives' 16-byte peer loads/stores and block copies/reductions,
// or device code that indexes peer pointers itself (the plain way: `peers[r][i]`).
const Rule kTransfer[] = {
    {"register",
     R"(\b(ld16\w*|st16|block_copy|block_copy_units|block_reduce|lamport_\w+|flagged_(reduce|exchange)|kRegisters)\b)"
     R"(|\b(one_shot_(reduce|exchange)|two_shot|direct_push|rooted_copy|rooted_exchange|reduce_to_root)\b)"
     R"(|\bprim::(reduction|exchange|rooted_copy_collective|rooted_reduce)\b)"
     R"(|\b(?!host_peers\b)\w*peers\s*\[|\bpeer\s*\(|ld\.global|st\.global|\bld\.volatile)"},
    {"tma",
     R"(cp\.async\.bulk|cp\.reduce\.async\.bulk|\b(bulk_load|bulk_store\w*|tma_relay|block_copy_tma|kTma)\b)"
     R"(|\bcuTensorMapEncode\w*)"},
    {"copy_engine", R"(\bcudaMemcpy\w*|\bcuMemcpy\w*|\b(ce_copy|ce_streams|ce_add)\b)"},
};

const Rule kOverlap[] = {
    {"warp_specialization",
     R"(\b(stage_ring|named_barrier_\w+|producer_\w+|consumer_\w+|warp_roles?)\b|\bbar\.(sync|arrive)\s+\d)"},
    {"sm_partition", R"(\brole_split\b|\b\w*comm_(blocks|sms)\b|\bnum_comm\w*)"},
    {"chunk_pipeline", R"(\b(chunk_flags|chunk_pipeline)\b)"},
    {"streams", R"(\bcudaStreamCreate\w*|\bcudaStreamWaitEvent\b|\bce_streams\b)"},
};

const Rule kSync[] = {
    {"flags",
     R"(\b(signal_store|signal_add|wait_at_least\w*|block_signal|block_wait|block_handshake|handshake_kernel)\b)"
     R"(|\b(two_shot|direct_push|rooted_copy|flagged)\b|\bprim::(reduction|exchange|rooted_copy_collective|rooted_reduce)\b)"
     R"(|st\.release|ld\.acquire|atom\.\w*\.?sys|\batomic\w*_system\b|\bcuda::atomic_ref\b|__threadfence_system)"},
    {"lamport", R"(\blamport_\w+|\bflagless_\w+|\bprim::lamport\b|\bprim::(reduction|exchange|rooted_copy_collective|rooted_reduce)\b)"},
    {"grid_barrier", R"(\bgrid_barrier\b|this_grid\s*\(\s*\)\s*\.\s*sync|\bcudaLaunchCooperativeKernel\b)"},
    {"host_barrier", R"(\bhost_barrier\b)"},
};

template <size_t N>
std::vector<std::string> matching(const Rule (&rules)[N], const std::string& code) {
  std::vector<std::string> out;
  for (const Rule& r : rules)
    if (std::regex_search(code, std::regex(r.pattern))) out.push_back(r.name);
  return out;
}

template <size_t N>
std::vector<std::string> names(const Rule (&rules)[N]) {
  std::vector<std::string> out;
  for (const Rule& r : rules) out.push_back(r.name);
  return out;
}

}  // namespace

KernelFeatures detect_features(const std::string& source) {
  const std::string code = eval::strip_comments(source, /*keep_strings=*/true);  // PTX is in strings
  return {matching(kTransfer, code), matching(kOverlap, code), matching(kSync, code)};
}

const std::vector<std::string>& transfer_names() {
  static const std::vector<std::string> n = names(kTransfer);
  return n;
}
const std::vector<std::string>& overlap_names() {
  static const std::vector<std::string> n = names(kOverlap);
  return n;
}
const std::vector<std::string>& sync_names() {
  static const std::vector<std::string> n = names(kSync);
  return n;
}

}  // namespace mgk::report
