// A problem made concrete: one size preset, one dtype, one world size, one rank.
#pragma once
#include <string>
#include <vector>

#include "common/expr.h"
#include "problems/spec.h"

namespace mgk::problems {

struct ResolvedTensor {
  std::string name;
  DType dtype;
  std::vector<long long> shape;
  long long numel = 0;
  bool symmetric = false;
  long long max_bytes_over_ranks = 0;  // symmetric allocations are this size on every rank
  int in_place_of = -1;                // outputs: index of the input it updates in place
  const TensorSpec* spec = nullptr;
};

struct ResolvedCost {
  double flops = 0, hbm_bytes = 0, link_bytes = 0;
};

struct Resolved {
  std::string size;
  DType dtype;
  int world_size = 0;
  int rank = 0;
  expr::Vars dims;  // the preset's dims plus W and R
  std::vector<ResolvedTensor> inputs;
  std::vector<ResolvedTensor> outputs;
  ResolvedCost cost;  // per rank; the max over ranks is what binds
};

// UsageError when the size or dtype is unknown or the world size is out of range.
Resolved resolve(const Spec& spec, const std::string& size, const std::string& dtype,
                 int world_size, int rank);

// The preset's dims (with W) without a rank, for display.
expr::Vars size_dims(const Spec& spec, const std::string& size, int world_size);

// The presets among `sizes` where some tensor of some rank has a byte count that is not a
// multiple of 16 (a vectorised kernel that forgets its tail fails there), as
// "odd (y: 666666 B on rank 0)"; empty when none.
std::vector<std::string> tail_sizes(const Spec& spec, const std::vector<std::string>& sizes,
                                    const std::string& dtype, int world_size);

// Largest per-rank cost over all ranks (roofline uses the slowest rank).
ResolvedCost max_cost_over_ranks(const Spec& spec, const std::string& size,
                                 const std::string& dtype, int world_size);

}  // namespace mgk::problems
