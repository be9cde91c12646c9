// Mutant of tests/gpu/candidates/conv/spherical_disco_conv.cu. Class: a wrong elementwise function (the roll's sign: output longitude p reads lam - p, not lam + p).
// ParallelKernelBench rolls x by -1 longitude per output longitude; read as the filter moving east, the rolled index comes out as lam - p, which agrees only at p = 0 and p = NLON / 2.
//
// The plain candidate's description:
// Plain: two stages with a barrier before each (x of this call in place on every rank; then
// every rank's partial responses in place). Rank r = q AZ + a (q its latitude block, a its
// longitude chunk and its channel chunk). Stage 1, one thread per element, writes the partial
// response of this rank's input latitudes, for its channel chunk, at every output latitude t
// and longitude p: the sum over psi's entries of row (k, t) whose latitude lies in block q of
// v x[b, c, l, (lam + p) mod NLON], x read from the rank of the azimuth group that holds that
// longitude (the first all-to-all, as loads). Stage 2, one thread per output element: the
// bias plus, for every latitude block q' (the polar sum) and every channel chunk s (the second
// all-to-all), the einsum over (c, k) of w with rank (q', s)'s partial at this rank's (t, p),
// accumulated in fp32.
#include "../../../candidates/plain_compute.cuh"

namespace {

struct Dims {
  int64_t B, C, COUT, K, NLAT, NLON, AZ, NP;
};

// Block i of n items cut into m blocks starts at i n / m (floor division).
__host__ __device__ inline int64_t block_start(int64_t i, int64_t n, int64_t m) { return i * n / m; }
__host__ __device__ inline int64_t block_size(int64_t i, int64_t n, int64_t m) {
  return block_start(i + 1, n, m) - block_start(i, n, m);
}
// The rank of latitude block q and longitude chunk a: azimuth groups are contiguous ranks.
__host__ __device__ inline int rank_at(int64_t q, int64_t a, const Dims& d) { return int(q * d.AZ + a); }

// Partial responses: part[b][c][k][t][p], c < this rank's chunk's channels.
__global__ void partial_kernel(void* const* x_peers, float* part, int q, int a, Dims d, int first, int end) {
  const int64_t cb = block_size(a, d.C, d.AZ), c0 = block_start(a, d.C, d.AZ), lat0 = block_start(q, d.NLAT, d.NP),
                nl = block_size(q, d.NLAT, d.NP);
  const int64_t total = d.B * cb * d.K * d.NLAT * d.NLON;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t p = i % d.NLON, t = (i / d.NLON) % d.NLAT, k = (i / (d.NLON * d.NLAT)) % d.K,
                  c = (i / (d.NLON * d.NLAT * d.K)) % cb, b = i / (d.NLON * d.NLAT * d.K * cb);
    float acc = 0;
    for (int j = 0; j < 4; ++j) {
      const int64_t l = (t + j * d.NLAT / 4) % d.NLAT;
      if (l < lat0 || l >= lat0 + nl) continue;  // another rank's latitude
      for (int e = 0; e < 4; ++e) {
        const int64_t lam = (t + j + e * (k + 1)) % d.NLON;
        const float v = float(int((13 * k + 5 * t + 7 * j + 11 * e + 3) % 31) - 15) / 256.0f;
        const int64_t at = (lam + d.NLON - p) % d.NLON;  // the roll: output longitude p reads lam - p
        int64_t s = d.AZ - 1;
        while (block_start(s, d.NLON, d.AZ) > at) --s;  // the longitude chunk holding it
        const int src = rank_at(q, s, d);
        if (src < first || src >= end) continue;  // MGK_LOCAL_ONLY: peers' data absent
        const int64_t lon0 = block_start(s, d.NLON, d.AZ), nls = block_size(s, d.NLON, d.AZ);
        const float xv =
            static_cast<const float*>(x_peers[src])[((b * d.C + c0 + c) * nl + l - lat0) * nls + at - lon0];
        acc += v * xv;
      }
    }
    part[i] = acc;
  }
}

// out[b, o, tl, pl] = bias[o] + sum over q', s and the channels c of chunk s and k of
// w[o, c, k] part_{(q', s)}[b][c - c0(s)][k][t][p].
__global__ void mix_kernel(void* const* part_peers, const float* w, const float* bias, float* out, int64_t total, int q,
                           int a, Dims d, int first, int end) {
  const int64_t lat0 = block_start(q, d.NLAT, d.NP), nl = block_size(q, d.NLAT, d.NP),
                lon0 = block_start(a, d.NLON, d.AZ), nla = block_size(a, d.NLON, d.AZ);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t pl = i % nla, tl = (i / nla) % nl, o = (i / (nla * nl)) % d.COUT, b = i / (nla * nl * d.COUT);
    const int64_t t = lat0 + tl, p = lon0 + pl;
    float acc = bias[o];
    for (int64_t qq = 0; qq < d.NP; ++qq) {
      for (int64_t s = 0; s < d.AZ; ++s) {
        const int src = rank_at(qq, s, d);
        if (src < first || src >= end) continue;  // MGK_LOCAL_ONLY: peers' data absent
        const float* part = static_cast<const float*>(part_peers[src]);
        const int64_t cbs = block_size(s, d.C, d.AZ), c0s = block_start(s, d.C, d.AZ);
        for (int64_t c = 0; c < cbs; ++c)
          for (int64_t k = 0; k < d.K; ++k)
            acc += w[(o * d.C + c0s + c) * d.K + k] * part[(((b * cbs + c) * d.K + k) * d.NLAT + t) * d.NLON + p];
      }
    }
    out[i] = acc;
  }
}

Dims dims(mgk_ctx* ctx) {
  return {mgk::dim(ctx, "B"),    mgk::dim(ctx, "C"),    mgk::dim(ctx, "COUT"), mgk::dim(ctx, "K"),
          mgk::dim(ctx, "NLAT"), mgk::dim(ctx, "NLON"), mgk::dim(ctx, "AZ"),   mgk::dim(ctx, "NP")};
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const Dims d = dims(ctx);
  int64_t cb = 0;  // the largest channel chunk
  for (int64_t s = 0; s < d.AZ; ++s) cb = std::max(cb, block_size(s, d.C, d.AZ));
  return plain::setup(ctx, {size_t(d.B * cb * d.K * d.NLAT * d.NLON) * sizeof(float)});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const Dims d = dims(ctx);
  const int q = int(ctx->rank / d.AZ), a = int(ctx->rank % d.AZ);
  const int first = plain::first_source(ctx), end = plain::end_source(ctx);
  const mgk_sym_buffer& part = plain::state(ctx).sym[0];
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's x of this call is in place
  const int64_t cb = block_size(a, d.C, d.AZ);
  partial_kernel<<<plain::blocks_for(d.B * cb * d.K * d.NLAT * d.NLON), 256, 0, s>>>(
      in[0].peers, static_cast<float*>(part.local), q, a, d, first, end);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's partial responses are in place
  mix_kernel<<<plain::blocks_for(out[0].numel), 256, 0, s>>>(
      part.peers, static_cast<const float*>(in[1].data), static_cast<const float*>(in[2].data),
      static_cast<float*>(out[0].data), out[0].numel, q, a, d, first, end);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
