// Reference: distributed two-hop neighbour sampling (PyG's / DGL's sampler over a graph whose
// CSR lists are partitioned round robin: node v's on rank v mod W) at library speed.
// Once per call the owner's row offsets are CUB's exclusive scan of its degrees. The node
// list is deduplicated through a dense position table (one int per node of the graph, as
// PyG's relabelling keeps): each candidate claims its node with an atomicMin of its index,
// the candidates that won are compacted in order by CUB's DeviceSelect (first occurrence
// kept) and their positions written. Each hop:
//   1. the frontier is bucketed by owner (an owner kernel, CUB's stable radix sort on the
//      owner, a gather), remembering where each frontier node went;
//   2. NCCL exchanges the counts (the host reads them: a synchronisation, as
//      ParallelKernelBench's .tolist() is), then one group sends each owner its ids;
//   3. the owner takes min(fanout, degree) of each id (a CUB scan places them), writes the
//      first neighbours and their edge ids, and the per-source totals go back through a
//      second count exchange;
//   4. one group returns to every requester its per-node counts, neighbours and edge ids;
//   5. the requester scans the counts in bucket order (where each reply sits) and in
//      frontier order (where each edge goes) and places the edges in frontier order;
//   6. the neighbours are deduplicated against the node list (the new ones are the next
//      frontier) and relabelled to positions.
// Every rank takes part in every exchange, whatever its frontier; zero counts are no
// message on either side. The tails of the outputs are zeroed and the two counts written.
#include <cub/cub.cuh>

#include <algorithm>
#include <vector>

#include "mgk/reference_kit.h"
#include "../owner_buckets.cuh"

namespace {

using gnn::bits_for;
using gnn::owners_kernel;

// cudaMemset with 0x7f: "not in the node list", above every position and candidate index.
constexpr int kAbsent = 0x7f7f7f7f;

inline int blocks_for(int64_t n) { return int(std::min<int64_t>((n + 255) / 256, 4096)); }

#define GRID_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

// Where each rank's segment of a variable-size exchange starts (W + 1 entries).
struct Offsets {
  int64_t at[MGK_MAX_WORLD + 1];
};

// send_ids[k] = frontier[perm[k]] (the frontier grouped by owner, stably) and
// bucket_of[perm[k]] = k (where each frontier node went).
__global__ void bucket_gather_kernel(const int* perm, int64_t n, const int64_t* frontier, int64_t* send_ids,
                                     int* bucket_of) {
  GRID_LOOP(k, n) {
    const int i = perm[k];
    send_ids[k] = frontier[i];
    bucket_of[i] = int(k);
  }
}

// The owner's side: how many neighbours each received node gets, min(fanout, degree).
__global__ void take_kernel(const int64_t* ids, int64_t n, int world, const int64_t* deg, int64_t fanout,
                            int64_t* take) {
  GRID_LOOP(i, n) {
    const int64_t d = deg[ids[i] / world];
    take[i] = d < fanout ? d : fanout;
  }
}

// The first take[i] neighbours of received node i and their edge ids (base + the position in
// this rank's adj), at off[i] onwards.
__global__ void sample_kernel(const int64_t* ids, const int64_t* take, const int64_t* off, int64_t n, int world,
                              const int64_t* rowptr, const int64_t* adj, int64_t base, int64_t* nbr, int64_t* eid) {
  GRID_LOOP(i, n) {
    const int64_t p0 = rowptr[ids[i] / world], o = off[i];
    for (int64_t j = 0; j < take[i]; ++j) {
      nbr[o + j] = adj[p0 + j];
      eid[o + j] = base + p0 + j;
    }
  }
}

// totals[s]: the neighbours sampled for source s's segment [at[s], at[s + 1]) of the
// received ids (what goes back to s). One thread per source.
__global__ void totals_kernel(const int64_t* take, const int64_t* off, Offsets a, int world, int64_t* totals) {
  for (int s = threadIdx.x; s < world; s += blockDim.x) {
    const int64_t b = a.at[s], e = a.at[s + 1];
    totals[s] = e > b ? off[e - 1] + take[e - 1] - off[b] : 0;
  }
}

// The replies' per-node counts in frontier order.
__global__ void frontier_counts_kernel(const int* bucket_of, const int64_t* got_take, int64_t n, int64_t* take) {
  GRID_LOOP(i, n) take[i] = got_take[bucket_of[i]];
}

// Frontier node i (position first + i in the node list): its replies, which sit at
// got_off[bucket_of[i]] in the received arrays, go to edges off[i] .. off[i] + take[i] of the hop.
__global__ void place_kernel(const int* bucket_of, const int64_t* take, const int64_t* off, const int64_t* got_off,
                             int64_t n, const int64_t* got_nbr, const int64_t* got_eid, int64_t first, int64_t* nbr,
                             int64_t* edge_id, int64_t* col) {
  GRID_LOOP(i, n) {
    const int64_t src = got_off[bucket_of[i]], dst = off[i];
    for (int64_t j = 0; j < take[i]; ++j) {
      nbr[dst + j] = got_nbr[src + j];
      edge_id[dst + j] = got_eid[src + j];
      col[dst + j] = first + i;
    }
  }
}

// Candidate i (list position base + i if it were new) claims its node.
__global__ void claim_kernel(const int64_t* ids, int64_t n, int64_t base, int* pos) {
  GRID_LOOP(i, n) atomicMin(pos + ids[i], int(base + i));
}

// Candidate i is kept when it won the claim: its node was not in the list, and no earlier
// candidate has it.
__global__ void won_kernel(const int64_t* ids, int64_t n, int64_t base, const int* pos, char* won) {
  GRID_LOOP(i, n) won[i] = pos[ids[i]] == base + i;
}

// The kept nodes' positions in the list.
__global__ void position_kernel(const int64_t* node, int64_t first, int64_t n, int* pos) {
  GRID_LOOP(k, n) pos[node[first + k]] = int(first + k);
}

__global__ void relabel_kernel(const int64_t* ids, int64_t n, const int* pos, int64_t* row) {
  GRID_LOOP(i, n) row[i] = pos[ids[i]];
}

struct NeighborSampling : mgk::Reference {
  using Reference::Reference;
  const int64_t N = dim("N"), SA = dim("SA"), SD = dim("SD"), SK = dim("SK"), DMAX = dim("DMAX");
  const int64_t F1 = dim("F1"), F2 = dim("F2"), EC = dim("EC");
  const int64_t ns = ctx->inputs[0].shape[0];          // this rank's seeds
  const int64_t nl = ctx->inputs[1].shape[0];          // the nodes this rank owns
  const int64_t cap_nodes = ctx->outputs[0].shape[0];  // S_R (1 + F1 + F1 F2)
  const int64_t cap_edges = ctx->outputs[1].shape[0];  // S_R (F1 + F1 F2)
  int64_t frontier_cap = 0;  // the most frontier nodes a hop of this rank has: S_R max(1, F1)
  int64_t recv_cap = 0;      // the most ids an owner receives in a hop: the sum over ranks of theirs
  int64_t sample_cap = 0;    // the most neighbours an owner samples in a hop
  mgk::DeviceBuffer<int> pos;  // N: a node's position in the node list, kAbsent if not in it
  mgk::DeviceBuffer<int64_t> rowptr;
  mgk::DeviceBuffer<int> owner, owner_sorted, slot, perm, bucket_of;
  mgk::DeviceBuffer<int64_t> send_ids, recv_ids, take, off, sampled_nbr, sampled_eid;
  mgk::DeviceBuffer<int64_t> got_take, got_off, front_take, front_off, got_nbr, got_eid, hop_nbr;
  mgk::DeviceBuffer<char> won;
  mgk::DeviceBuffer<int64_t> counts, totals, selected;  // 2W, 2W, 1
  mgk::DeviceBuffer<char> temp;
  size_t temp_bytes = 0;
  std::vector<int64_t> host_counts, host_totals;
  int64_t host_selected = 0;
  int64_t filled[2] = {0, 0};  // nodes, edges: copied to num_nodes, num_edges

  int setup() {
    const int W = world();
    if (cap_nodes != ns * (1 + F1 + F1 * F2) || cap_edges != ns * (F1 + F1 * F2) || F1 < 0 || F2 < 0)
      return mgk::set_error(ctx, "the spec's capacities are not S_R (1 + F1 + F1 F2) and S_R (F1 + F1 F2)");
    const int64_t widest = std::max<int64_t>(1, F1);
    frontier_cap = ns * widest;
    int64_t all_seeds = 0;
    for (int s = 0; s < W; ++s) all_seeds += SA + SD * ((s + SK) % 3);
    recv_cap = all_seeds * widest;
    sample_cap = recv_cap * std::max<int64_t>(1, std::max(F1, F2));
    if (cap_nodes + cap_edges >= kAbsent || recv_cap >= (int64_t(1) << 31))
      return mgk::set_error(ctx, "the node list's positions do not fit an int");
    const int64_t fc = std::max<int64_t>(frontier_cap, 1), rc = std::max<int64_t>(recv_cap, 1);
    const int64_t sc = std::max<int64_t>(sample_cap, 1), ec = std::max<int64_t>(cap_edges, 1);
    MGK_CUDA_TRY(ctx, pos.allocate(N));
    MGK_CUDA_TRY(ctx, rowptr.allocate(std::max<int64_t>(nl, 1)));
    for (auto* b : {&owner, &owner_sorted, &slot, &perm, &bucket_of}) MGK_CUDA_TRY(ctx, b->allocate(fc));
    for (auto* b : {&send_ids, &got_take, &got_off, &front_take, &front_off}) MGK_CUDA_TRY(ctx, b->allocate(fc));
    for (auto* b : {&recv_ids, &take, &off}) MGK_CUDA_TRY(ctx, b->allocate(rc));
    for (auto* b : {&sampled_nbr, &sampled_eid}) MGK_CUDA_TRY(ctx, b->allocate(sc));
    for (auto* b : {&got_nbr, &got_eid, &hop_nbr}) MGK_CUDA_TRY(ctx, b->allocate(ec));
    MGK_CUDA_TRY(ctx, won.allocate(std::max(ec, std::max<int64_t>(ns, 1))));
    MGK_CUDA_TRY(ctx, counts.allocate(2 * W));
    MGK_CUDA_TRY(ctx, totals.allocate(2 * W));
    MGK_CUDA_TRY(ctx, selected.allocate(1));

    // One temporary buffer for every CUB call, sized for its largest use.
    size_t bytes = 0;
    const int64_t scan_n = std::max({nl, rc, fc});
    MGK_CUDA_TRY(ctx, cub::DeviceScan::ExclusiveSum(nullptr, bytes, take.get(), off.get(), int(scan_n)));
    temp_bytes = std::max(temp_bytes, bytes);
    MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(nullptr, bytes, owner.get(), owner_sorted.get(), slot.get(),
                                                      perm.get(), int(fc), 0, bits_for(W)));
    temp_bytes = std::max(temp_bytes, bytes);
    MGK_CUDA_TRY(ctx, cub::DeviceSelect::Flagged(nullptr, bytes, hop_nbr.get(), won.get(), got_nbr.get(),
                                                 selected.get(), int(std::max(ec, std::max<int64_t>(ns, 1)))));
    temp_bytes = std::max(temp_bytes, bytes);
    MGK_CUDA_TRY(ctx, temp.allocate(std::max<size_t>(temp_bytes, 16)));
    host_counts.resize(2 * W);
    host_totals.resize(2 * W);
    return 0;
  }

  int scan(const int64_t* in, int64_t* out, int64_t n, cudaStream_t st) {
    if (n <= 0) return 0;
    size_t bytes = temp_bytes;
    MGK_CUDA_TRY(ctx, cub::DeviceScan::ExclusiveSum(temp.get(), bytes, in, out, int(n), st));
    return 0;
  }

  // Appends the candidates' nodes that are not in the list yet, in first-occurrence order,
  // at node[m ..]; m grows by their number (read by the host).
  int append_new(const int64_t* cand, int64_t n, int64_t* node, int64_t& m, cudaStream_t st) {
    if (n <= 0) return 0;
    claim_kernel<<<blocks_for(n), 256, 0, st>>>(cand, n, m, pos);
    MGK_LAUNCH_CHECK(ctx);
    won_kernel<<<blocks_for(n), 256, 0, st>>>(cand, n, m, pos, won);
    MGK_LAUNCH_CHECK(ctx);
    size_t bytes = temp_bytes;
    MGK_CUDA_TRY(ctx, cub::DeviceSelect::Flagged(temp.get(), bytes, cand, won.get(), node + m, selected.get(), int(n),
                                                 st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(&host_selected, selected.get(), 8, cudaMemcpyDeviceToHost, st));
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
    if (host_selected > 0) {
      position_kernel<<<blocks_for(host_selected), 256, 0, st>>>(node, m, host_selected, pos);
      MGK_LAUNCH_CHECK(ctx);
    }
    m += host_selected;
    return 0;
  }

  // One hop from the frontier node[lo, m): edges appended at e, new nodes at m; then lo and m
  // move to the new frontier. *done when timed without communication.
  int hop(int64_t fanout, const int64_t* deg, const int64_t* adj, int64_t* node, int64_t* row, int64_t* col,
          int64_t* edge_id, int64_t& lo, int64_t& m, int64_t& e, bool& done, cudaStream_t st) {
    const int W = world(), r = rank();
    const int64_t nf = m - lo;
    const int64_t* frontier = node + lo;

    // 1. The frontier by owner.
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(counts, 0, size_t(W) * 8, st));
    if (nf > 0) {
      owners_kernel<<<blocks_for(nf), 256, 0, st>>>(frontier, nf, W, owner, slot, counts);
      MGK_LAUNCH_CHECK(ctx);
      size_t bytes = temp_bytes;
      MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(temp.get(), bytes, owner.get(), owner_sorted.get(), slot.get(),
                                                        perm.get(), int(nf), 0, bits_for(W), st));
      bucket_gather_kernel<<<blocks_for(nf), 256, 0, st>>>(perm, nf, frontier, send_ids, bucket_of);
      MGK_LAUNCH_CHECK(ctx);
    }
    const ncclComm_t group = comm();
    if (!group) {  // bench/compute: the bucketing alone
      done = true;
      return 0;
    }

    // 2. Counts, then the ids to their owners.
    // sent: the ids this rank asks each owner about; got: the ids each rank asks this rank about.
    mgk::ExchangeSizes sizes;
    if (int rc = mgk::exchange_sizes(ctx, group, counts, host_counts, nf, recv_cap, sizes, st)) return rc;
    const auto& [sent, got, send_at, recv_at] = sizes;
    const int64_t nrecv = recv_at[W];
    if (int rc = mgk::exchange_blocks(ctx, group, send_ids, sent, send_at.data(), recv_ids, got, recv_at.data(), 8, st))
      return rc;

    // 3. The owner samples: min(fanout, degree) each, placed by a scan; the totals per source.
    if (nrecv > 0) {
      take_kernel<<<blocks_for(nrecv), 256, 0, st>>>(recv_ids, nrecv, W, deg, fanout, take);
      MGK_LAUNCH_CHECK(ctx);
      if (int rc = scan(take, off, nrecv, st)) return rc;
      sample_kernel<<<blocks_for(nrecv), 256, 0, st>>>(recv_ids, take, off, nrecv, W, rowptr, adj, r * EC,
                                                       sampled_nbr, sampled_eid);
      MGK_LAUNCH_CHECK(ctx);
    }
    Offsets at{};
    for (int s = 0; s <= W; ++s) at.at[s] = recv_at[s];
    totals_kernel<<<1, 128, 0, st>>>(take, off, at, W, totals);
    MGK_LAUNCH_CHECK(ctx);
    if (int rc = mgk::exchange_counts(ctx, group, totals, host_totals, st)) return rc;
    const int64_t* give = host_totals.data();  // neighbours this rank sampled for each source
    const int64_t* get = give + W;             // neighbours each owner sampled for this rank
    const std::vector<int64_t> give_at = mgk::exclusive_offsets(give, W), get_at = mgk::exclusive_offsets(get, W);
    const int64_t t = get_at[W];
    if (give_at[W] > sample_cap || e + t > cap_edges)
      return mgk::set_error(ctx, "hop: %lld neighbours sampled into %lld, %lld received with %lld of %lld edges used",
                            (long long)give_at[W], (long long)sample_cap, (long long)t, (long long)e,
                            (long long)cap_edges);

    // 4. The replies: per-node counts (in the order the ids came), neighbours, edge ids.
    if (sent[r] > 0)
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(got_take + send_at[r], take + recv_at[r], size_t(sent[r]) * 8,
                                        cudaMemcpyDeviceToDevice, st));
    if (give[r] > 0) {
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(got_nbr + get_at[r], sampled_nbr + give_at[r], size_t(give[r]) * 8,
                                        cudaMemcpyDeviceToDevice, st));
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(got_eid + get_at[r], sampled_eid + give_at[r], size_t(give[r]) * 8,
                                        cudaMemcpyDeviceToDevice, st));
    }
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    for (int p = 0; p < W; ++p) {
      if (p == r) continue;
      if (got[p] > 0) MGK_NCCL_TRY(ctx, ncclSend(take + recv_at[p], size_t(got[p]), ncclInt64, p, group, st));
      if (sent[p] > 0) MGK_NCCL_TRY(ctx, ncclRecv(got_take + send_at[p], size_t(sent[p]), ncclInt64, p, group, st));
      if (give[p] > 0) {
        MGK_NCCL_TRY(ctx, ncclSend(sampled_nbr + give_at[p], size_t(give[p]), ncclInt64, p, group, st));
        MGK_NCCL_TRY(ctx, ncclSend(sampled_eid + give_at[p], size_t(give[p]), ncclInt64, p, group, st));
      }
      if (get[p] > 0) {
        MGK_NCCL_TRY(ctx, ncclRecv(got_nbr + get_at[p], size_t(get[p]), ncclInt64, p, group, st));
        MGK_NCCL_TRY(ctx, ncclRecv(got_eid + get_at[p], size_t(get[p]), ncclInt64, p, group, st));
      }
    }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());

    // 5. Back to frontier order: the replies sit in bucket order (owner by owner, each owner's
    // in the order it was asked), the edges go in frontier order.
    if (nf > 0) {
      if (int rc = scan(got_take, got_off, nf, st)) return rc;
      frontier_counts_kernel<<<blocks_for(nf), 256, 0, st>>>(bucket_of, got_take, nf, front_take);
      MGK_LAUNCH_CHECK(ctx);
      if (int rc = scan(front_take, front_off, nf, st)) return rc;
      place_kernel<<<blocks_for(nf), 256, 0, st>>>(bucket_of, front_take, front_off, got_off, nf, got_nbr, got_eid, lo,
                                                   hop_nbr, edge_id + e, col + e);
      MGK_LAUNCH_CHECK(ctx);
    }

    // 6. The new nodes (the next frontier) and the neighbours' positions.
    const int64_t before = m;
    if (int rc = append_new(hop_nbr, t, node, m, st)) return rc;
    if (t > 0) {
      relabel_kernel<<<blocks_for(t), 256, 0, st>>>(hop_nbr, t, pos, row + e);
      MGK_LAUNCH_CHECK(ctx);
    }
    lo = before;
    e += t;
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const auto [seeds, deg, adj] = mgk::tensor_data<const int64_t, const int64_t, const int64_t>(in);
    const auto [node, row, col, edge_id] = mgk::tensor_data<int64_t, int64_t, int64_t, int64_t>(out);

    // This rank's row offsets, and an empty node list.
    if (int rc = scan(deg, rowptr, nl, st)) return rc;
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(pos, 0x7f, size_t(N) * sizeof(int), st));

    // The distinct seeds, then two hops.
    int64_t lo = 0, m = 0, e = 0;
    if (int rc = append_new(seeds, ns, node, m, st)) return rc;
    bool done = false;
    for (const int64_t fanout : {F1, F2}) {
      if (int rc = hop(fanout, deg, adj, node, row, col, edge_id, lo, m, e, done, st)) return rc;
      if (done) return 0;
    }

    // The tails and the counts.
    if (m < cap_nodes) MGK_CUDA_TRY(ctx, cudaMemsetAsync(node + m, 0, size_t(cap_nodes - m) * 8, st));
    if (e < cap_edges)
      for (int64_t* o : {row, col, edge_id}) MGK_CUDA_TRY(ctx, cudaMemsetAsync(o + e, 0, size_t(cap_edges - e) * 8, st));
    filled[0] = m;
    filled[1] = e;
    // From pageable memory: staged before the call returns, so `filled` may change after.
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(out[4].data, &filled[0], 8, cudaMemcpyHostToDevice, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(out[5].data, &filled[1], 8, cudaMemcpyHostToDevice, st));
    return 0;
  }

  // A host walk, hop by hop, over every owner's regenerated graph: every owner's degrees
  // are regenerated on the device (as the harness drew them: the zipf draw's pow() must be
  // the device's) and read back, each owner's row offsets summed on the host; this rank's
  // seeds likewise. Each hop lists the (owner, position) of every neighbour its frontier
  // takes, in frontier order, regenerates those adj entries on the device and reads them
  // back; the node list grows by the neighbours not yet in it, in order.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int W = world();
    const int64_t N = this->N, EC = this->EC;  // by value into the device lambdas
    if (a->outputs[0].shape[0] != cap_nodes || a->outputs[1].shape[0] != cap_edges)
      return mgk::set_error(ctx, "oracle: the outputs' shapes are not the set-up's");
    mgk::oracle::Scratch scratch(st);

    // Every owner's degrees and row offsets; node v's are at first[v % W] + v / W.
    std::vector<int64_t> first(W + 1, 0);
    for (int s = 0; s < W; ++s) first[s + 1] = first[s] + (N - s + W - 1) / W;
    if (first[W] != N) return mgk::set_error(ctx, "oracle: the owners' node counts add up to %lld", (long long)first[W]);
    int64_t* d_deg = scratch.get<int64_t>(N);
    int64_t* d_seeds = scratch.get<int64_t>(ns);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    const mgk_input_gen gdeg = a->gens[1], gseeds = a->gens[0], gadj = a->gens[2];
    for (int s = 0; s < W; ++s) {
      int64_t* dst = d_deg + first[s];
      MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                            first[s + 1] - first[s],
                            [=] __device__(int64_t i) { dst[i] = int64_t(mgk::gen_value(gdeg, s, i)); }, st));
    }
    const int me = rank();
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          ns, [=] __device__(int64_t i) { d_seeds[i] = int64_t(mgk::gen_value(gseeds, me, i)); }, st));
    std::vector<int64_t> degree(N), start(N), seeds(ns);
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(degree.data(), d_deg, size_t(N) * 8, cudaMemcpyDeviceToHost, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(seeds.data(), d_seeds, size_t(ns) * 8, cudaMemcpyDeviceToHost, st));
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
    for (int s = 0; s < W; ++s) {
      int64_t at = 0;
      for (int64_t l = first[s]; l < first[s + 1]; ++l) {
        if (degree[l] < 0 || degree[l] > DMAX)
          return mgk::set_error(ctx, "oracle: rank %d's degree %lld outside [0, DMAX]", s, (long long)degree[l]);
        start[l] = at;
        at += degree[l];
      }
    }

    std::vector<int64_t> node, row, col, eid, pos(N, -1);
    auto add = [&](int64_t v) {
      if (pos[v] < 0) {
        pos[v] = int64_t(node.size());
        node.push_back(v);
      }
    };
    for (int64_t v : seeds) {
      if (v < 0 || v >= N) return mgk::set_error(ctx, "oracle: seed %lld outside [0, N)", (long long)v);
      add(v);
    }
    size_t lo = 0;
    for (const int64_t fanout : {F1, F2}) {
      const size_t hi = node.size();
      // The neighbours this hop takes: (owner, position in the owner's adj), frontier order.
      std::vector<int> h_owner;
      std::vector<int64_t> h_at;
      for (size_t i = lo; i < hi; ++i) {
        const int64_t v = node[i], o = v % W, g = first[o] + v / W;
        for (int64_t j = 0; j < std::min(fanout, degree[g]); ++j) {
          h_owner.push_back(int(o));
          h_at.push_back(start[g] + j);
          col.push_back(int64_t(i));
          eid.push_back(o * EC + start[g] + j);
        }
      }
      const int64_t t = int64_t(h_at.size());
      std::vector<int64_t> nbr(t);
      if (t > 0) {
        int* d_owner = scratch.get<int>(t);
        int64_t* d_at = scratch.get<int64_t>(t);
        int64_t* d_nbr = scratch.get<int64_t>(t);
        if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
        MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d_owner, h_owner.data(), size_t(t) * sizeof(int), cudaMemcpyHostToDevice, st));
        MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d_at, h_at.data(), size_t(t) * 8, cudaMemcpyHostToDevice, st));
        MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                              t, [=] __device__(int64_t i) { d_nbr[i] = int64_t(mgk::gen_value(gadj, d_owner[i], d_at[i])); },
                              st));
        MGK_CUDA_TRY(ctx, cudaMemcpyAsync(nbr.data(), d_nbr, size_t(t) * 8, cudaMemcpyDeviceToHost, st));
        MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
      }
      for (int64_t v : nbr) {
        if (v < 0 || v >= N) return mgk::set_error(ctx, "oracle: neighbour %lld outside [0, N)", (long long)v);
        add(v);
        row.push_back(pos[v]);
      }
      lo = hi;
    }

    const int64_t nodes = int64_t(node.size()), edges = int64_t(row.size());
    if (nodes > cap_nodes || edges > cap_edges)
      return mgk::set_error(ctx, "oracle: %lld nodes and %lld edges exceed the capacities", (long long)nodes,
                            (long long)edges);
    node.resize(cap_nodes, 0);
    for (auto* v : {&row, &col, &eid}) v->resize(cap_edges, 0);
    const std::vector<int64_t>* want[4] = {&node, &row, &col, &eid};
    for (int o = 0; o < 4; ++o)
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(a->expected[o], want[o]->data(), want[o]->size() * 8, cudaMemcpyHostToDevice,
                                        st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(a->expected[4], &nodes, 8, cudaMemcpyHostToDevice, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(a->expected[5], &edges, 8, cudaMemcpyHostToDevice, st));
    // The host vectors must outlive the copies.
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(NeighborSampling)
