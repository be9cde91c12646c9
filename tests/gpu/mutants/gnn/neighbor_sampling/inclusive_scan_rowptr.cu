// Mutant of tests/gpu/candidates/gnn/neighbor_sampling.cu. Class: off by one in an index (the row offsets from an inclusive prefix sum of the degrees, where an exclusive one is needed).
// Each node's list is taken to start after its own degree: the neighbours are the next
// node's (and the edge ids shifted by the degree).
//
// The plain candidate's description:
// Plain: after a barrier, each rank writes its row offsets (the exclusive prefix sum of its
// degrees, one thread) into a symmetric buffer; after a second barrier every rank samples
// its own seeds on its own, reading each owner's degrees, row offsets and neighbours through
// peer pointers. One thread keeps the node list: the seeds in order, each added if its
// position is still unset. Each hop: one thread per frontier node takes min(fanout, degree)
// of its owner's list (owner v mod W, local index v / W), one thread places the hop's edges
// frontier node by frontier node (a running sum), one thread per frontier node writes its
// neighbours, edge ids (owner EC + position) and its own position, and one thread walks the
// hop's edges in order, adding each neighbour not in the list yet and writing its position.
// Zeros past the counts. Under MGK_LOCAL_ONLY the other ranks' nodes have no neighbours.
#include "../../../candidates/plain_compute.cuh"

namespace {
constexpr int64_t kUnset = -1;

// The walk's state: the frontier node[lo, hi), m nodes and e edges so far, t this hop's edges.
struct Walk {
  int64_t lo, hi, m, e, t;
};

// This rank's row offsets: rowptr[l] = deg[0] + ... + deg[l - 1].
__global__ void rowptr_kernel(const int64_t* deg, int64_t nl, int64_t* rowptr) {
  int64_t at = 0;
  for (int64_t l = 0; l < nl; ++l) {
    at += deg[l];
    rowptr[l] = at;
  }
}

__global__ void unset_kernel(int64_t* pos, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    pos[i] = kUnset;
}

// The distinct seeds in order: the node list's start and the first frontier.
__global__ void seeds_kernel(const int64_t* seeds, int64_t ns, int64_t* pos, int64_t* node, Walk* w) {
  int64_t m = 0;
  for (int64_t i = 0; i < ns; ++i) {
    const int64_t v = seeds[i];
    if (pos[v] == kUnset) {
      pos[v] = m;
      node[m++] = v;
    }
  }
  *w = Walk{0, m, m, 0, 0};
}

// Frontier node i takes min(fanout, degree) neighbours; its owner's degree via peer pointers.
__global__ void take_kernel(const int64_t* node, const Walk* w, int64_t cap, void* const* deg, int world, int rank,
                            int64_t fanout, int64_t* take) {
  const int64_t lo = w->lo, nf = w->hi - w->lo;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < nf && i < cap;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t v = node[lo + i];
    const int o = int(v % world);
    const bool used = MGK_LOCAL_ONLY ? o == rank : true;
    const int64_t d = used ? static_cast<const int64_t*>(deg[o])[v / world] : 0;
    take[i] = d < fanout ? d : fanout;
  }
}

// Where frontier node i's edges start in the hop (a running sum), and the hop's edge count.
__global__ void place_kernel(const int64_t* take, Walk* w, int64_t* off) {
  const int64_t nf = w->hi - w->lo;
  int64_t at = 0;
  for (int64_t i = 0; i < nf; ++i) {
    off[i] = at;
    at += take[i];
  }
  w->t = at;
}

// Frontier node i's neighbours, edge ids and position, read from its owner through peer
// pointers: the j-th neighbour is the owner's adj[rowptr[l] + j].
__global__ void sample_kernel(const int64_t* node, const Walk* w, int64_t cap, void* const* rowptr, void* const* adj,
                              int world, int64_t ec, const int64_t* take, const int64_t* off, int64_t* nbr,
                              int64_t* edge_id, int64_t* col) {
  const int64_t lo = w->lo, nf = w->hi - w->lo, e = w->e;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < nf && i < cap;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t v = node[lo + i];
    const int o = int(v % world);
    const int64_t* a = static_cast<const int64_t*>(adj[o]);
    const int64_t p0 = take[i] > 0 ? static_cast<const int64_t*>(rowptr[o])[v / world] : 0;
    for (int64_t j = 0; j < take[i]; ++j) {
      const int64_t k = e + off[i] + j;
      nbr[k] = a[p0 + j];
      edge_id[k] = o * ec + p0 + j;
      col[k] = lo + i;
    }
  }
}

// The hop's edges in order: each neighbour not in the list yet is added; its position is the
// edge's row. The new nodes are the next frontier.
__global__ void dedup_kernel(const int64_t* nbr, int64_t* pos, int64_t* node, int64_t* row, Walk* w) {
  int64_t m = w->m;
  for (int64_t k = w->e; k < w->e + w->t; ++k) {
    const int64_t u = nbr[k];
    if (pos[u] == kUnset) {
      pos[u] = m;
      node[m++] = u;
    }
    row[k] = pos[u];
  }
  *w = Walk{w->m, m, m, w->e + w->t, 0};
}

// Zeros past the counts, and the counts.
__global__ void finish_kernel(const Walk* w, int64_t cap_nodes, int64_t cap_edges, int64_t* node, int64_t* row,
                              int64_t* col, int64_t* edge_id, int64_t* num_nodes, int64_t* num_edges) {
  const int64_t m = w->m, e = w->e;
  const int64_t n = cap_nodes > cap_edges ? cap_nodes : cap_edges;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    if (i < cap_nodes && i >= m) node[i] = 0;
    if (i < cap_edges && i >= e) row[i] = col[i] = edge_id[i] = 0;
    if (i == 0) {
      *num_nodes = m;
      *num_edges = e;
    }
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t N = mgk::dim(ctx, "N"), F1 = mgk::dim(ctx, "F1"), W = ctx->world_size;
  const int64_t ns = ctx->inputs[0].shape[0], cap_edges = ctx->outputs[1].shape[0];
  const size_t frontier = size_t(ns * (F1 > 1 ? F1 : 1));
  const size_t owned = size_t((N + W - 1) / W);
  // Symmetric: the row offsets. Private: pos, take, off, the neighbours, the walk.
  return plain::setup(ctx, {owned * 8}, {size_t(N) * 8, frontier * 8, frontier * 8, size_t(cap_edges) * 8, 64});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int W = ctx->world_size, r = ctx->rank;
  const int64_t N = mgk::dim(ctx, "N"), F1 = mgk::dim(ctx, "F1"), F2 = mgk::dim(ctx, "F2"), EC = mgk::dim(ctx, "EC");
  const int64_t ns = in[0].shape[0], nl = in[1].shape[0];
  const int64_t cap_nodes = out[0].shape[0], cap_edges = out[1].shape[0];
  const int64_t frontier = ns * (F1 > 1 ? F1 : 1);
  plain::State& st = plain::state(ctx);
  auto* pos = static_cast<int64_t*>(st.local[0]);
  auto* take = static_cast<int64_t*>(st.local[1]);
  auto* off = static_cast<int64_t*>(st.local[2]);
  auto* nbr = static_cast<int64_t*>(st.local[3]);
  auto* walk = static_cast<Walk*>(st.local[4]);
  auto* node = static_cast<int64_t*>(out[0].data);
  auto* row = static_cast<int64_t*>(out[1].data);
  auto* col = static_cast<int64_t*>(out[2].data);
  auto* edge_id = static_cast<int64_t*>(out[3].data);

  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's inputs of this call are in place
  rowptr_kernel<<<1, 1, 0, s>>>(static_cast<const int64_t*>(in[1].data), nl, static_cast<int64_t*>(st.sym[0].local));
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every owner's row offsets are in place

  unset_kernel<<<plain::blocks_for(N), 256, 0, s>>>(pos, N);
  MGK_LAUNCH_CHECK(ctx);
  seeds_kernel<<<1, 1, 0, s>>>(static_cast<const int64_t*>(in[0].data), ns, pos, node, walk);
  MGK_LAUNCH_CHECK(ctx);
  for (const int64_t fanout : {F1, F2}) {
    take_kernel<<<plain::blocks_for(frontier), 256, 0, s>>>(node, walk, frontier, in[1].peers, W, r, fanout, take);
    MGK_LAUNCH_CHECK(ctx);
    place_kernel<<<1, 1, 0, s>>>(take, walk, off);
    MGK_LAUNCH_CHECK(ctx);
    sample_kernel<<<plain::blocks_for(frontier), 256, 0, s>>>(node, walk, frontier, st.sym[0].peers, in[2].peers, W,
                                                              EC, take, off, nbr, edge_id, col);
    MGK_LAUNCH_CHECK(ctx);
    dedup_kernel<<<1, 1, 0, s>>>(nbr, pos, node, row, walk);
    MGK_LAUNCH_CHECK(ctx);
  }
  finish_kernel<<<plain::blocks_for(cap_nodes), 256, 0, s>>>(walk, cap_nodes, cap_edges, node, row, col, edge_id,
                                                             static_cast<int64_t*>(out[4].data),
                                                             static_cast<int64_t*>(out[5].data));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
