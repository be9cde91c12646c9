#include "collective_specs.h"

namespace mgk::bench {
namespace {

int64_t per_rank(int64_t d, int, int) { return d; }
int64_t per_rank_alloc(int64_t d, int) { return d; }
int64_t all_chunks(int64_t d, int w, int) { return d * w; }
int64_t all_chunks_alloc(int64_t d, int w) { return d * w; }
int64_t root_only(int64_t d, int, int r) { return r == 0 ? d : 0; }
int64_t root_only_chunks(int64_t d, int w, int r) { return r == 0 ? d * w : 0; }

void sum_into(const std::vector<std::vector<double>>& x, int64_t offset, int64_t n, std::vector<double>* y) {
  y->assign(size_t(n), 0.0);
  for (const auto& xr : x)
    for (int64_t i = 0; i < n; ++i) (*y)[size_t(i)] += xr[size_t(offset + i)];
}

}  // namespace

const std::vector<CollectiveSpec>& collective_specs() {
  static const std::vector<CollectiveSpec> specs = {
      {"all_reduce", "N", per_rank, per_rank_alloc, per_rank, per_rank_alloc,
       [](const auto& x, int64_t d, int, int, std::vector<double>* y) { sum_into(x, 0, d, y); }},
      {"all_gather", "N", per_rank, per_rank_alloc, all_chunks, all_chunks_alloc,
       [](const auto& x, int64_t d, int w, int, std::vector<double>* y) {
         y->clear();
         for (int s = 0; s < w; ++s) y->insert(y->end(), x[s].begin(), x[s].begin() + d);
       }},
      {"broadcast", "N", per_rank, per_rank_alloc, per_rank, per_rank_alloc,
       [](const auto& x, int64_t d, int, int, std::vector<double>* y) { y->assign(x[0].begin(), x[0].begin() + d); }},
      {"reduce", "N", per_rank, per_rank_alloc, root_only, per_rank_alloc,
       [](const auto& x, int64_t d, int, int r, std::vector<double>* y) {
         if (r == 0) sum_into(x, 0, d, y);
         else y->clear();
       }},
      {"scatter", "C", root_only_chunks, all_chunks_alloc, per_rank, per_rank_alloc,
       [](const auto& x, int64_t d, int, int r, std::vector<double>* y) {
         y->assign(x[0].begin() + r * d, x[0].begin() + (r + 1) * d);
       }},
      {"gather", "C", per_rank, per_rank_alloc, root_only_chunks, all_chunks_alloc,
       [](const auto& x, int64_t d, int w, int r, std::vector<double>* y) {
         y->clear();
         if (r == 0)
           for (int s = 0; s < w; ++s) y->insert(y->end(), x[s].begin(), x[s].begin() + d);
       }},
      {"reduce_scatter", "C", all_chunks, all_chunks_alloc, per_rank, per_rank_alloc,
       [](const auto& x, int64_t d, int, int r, std::vector<double>* y) { sum_into(x, r * d, d, y); }},
      {"all_to_all", "C", all_chunks, all_chunks_alloc, all_chunks, all_chunks_alloc,
       [](const auto& x, int64_t d, int w, int r, std::vector<double>* y) {
         y->clear();
         for (int s = 0; s < w; ++s) y->insert(y->end(), x[s].begin() + r * d, x[s].begin() + (r + 1) * d);
       }},
  };
  return specs;
}

}  // namespace mgk::bench
