// What each collective of problems/collectives computes, independently of any kernel: the
// per-rank tensor sizes (as the problem table defines them) and a host-side oracle.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mgk::bench {

struct CollectiveSpec {
  const char* name;  // the folder name under problems/collectives
  const char* dim;   // "N" (per-rank vector) or "C" (chunk)
  // Elements of x and y on `rank`, and of their symmetric allocations (the same on every rank).
  int64_t (*x_numel)(int64_t d, int world, int rank);
  int64_t (*x_alloc)(int64_t d, int world);
  int64_t (*y_numel)(int64_t d, int world, int rank);
  int64_t (*y_alloc)(int64_t d, int world);
  // y of `rank`, given every rank's x (x[r] has x_numel(d, world, r) elements).
  void (*expect)(const std::vector<std::vector<double>>& x, int64_t d, int world, int rank, std::vector<double>* y);
};

const std::vector<CollectiveSpec>& collective_specs();

}  // namespace mgk::bench
