// Shared by gnn/feature_exchange_all2all and gnn/feature_exchange_all2all_backward: the
// per-peer row counts (a formula of the source rank, the destination rank and the dims, so
// that every rank's shapes are fixed for a preset) and DGL's rank-relative ("shifted")
// chunk order, as the statements define them.
#pragma once
#include <cstdint>
#include <vector>

#include "mgk/reference_kit.h"

namespace gnn {

// n(s, d): the rows rank s sends to rank d,
//   n(s, d) = A + B ((d - s + K) mod W) + E [s even].
struct ExchangeCounts {
  int64_t A, B, E, K;
  int W;
  int64_t n(int s, int d) const { return A + B * ((d - s + K % W + 2 * W) % W) + (s % 2 == 0 ? E : 0); }
};

// Rank r's chunks in DGL's shifted order. What it sends is split into W chunks, chunk k (of
// send_count[k] rows, from row send_at[k]) going to rank (r + k) mod W; what it receives is
// split into W chunks, chunk c (recv_count[c] rows at row recv_at[c]) coming from rank
// (r + c) mod W, where it was that rank's chunk (W - c) mod W. Chunk 0 is the rank's own.
struct ExchangeLayout {
  std::vector<int64_t> send_count, send_at, recv_count, recv_at;
  int64_t sent = 0, received = 0;

  ExchangeLayout(const ExchangeCounts& c, int r) {
    const int w = c.W;
    for (int k = 0; k < w; ++k) {
      send_at.push_back(sent);
      send_count.push_back(c.n(r, (r + k) % w));
      sent += send_count.back();
      recv_at.push_back(received);
      recv_count.push_back(c.n((r + k) % w, r));
      received += recv_count.back();
    }
  }
};

// The counts of the preset the reference runs (dims A, B, E, K), read once with the kit.
struct FeatureExchange : mgk::Reference {
  using Reference::Reference;
  const int64_t A = dim("A"), B = dim("B"), E = dim("E"), K = dim("K"), H = dim("H");
  const ExchangeCounts counts{A, B, E, K, world()};
  const ExchangeLayout layout{counts, rank()};

  // The spec's shapes must be the counts' totals: `sent_rows` rows of the tensor this rank
  // sends from, `received_rows` of what it receives.
  int check_shapes(int64_t sent_rows, int64_t received_rows) {
    if (sent_rows != layout.sent || received_rows != layout.received)
      return mgk::set_error(ctx, "the spec's shapes (%lld rows sent, %lld received) are not the counts' sums (%lld, %lld)",
                            (long long)sent_rows, (long long)received_rows, (long long)layout.sent,
                            (long long)layout.received);
    return 0;
  }
};

}  // namespace gnn
