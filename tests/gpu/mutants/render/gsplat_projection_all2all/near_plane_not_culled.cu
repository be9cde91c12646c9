// Mutant of tests/gpu/candidates/render/gsplat_projection_all2all.cu. Class: a missing numerical safeguard (the near-plane cull: only the far plane is tested).
// Only depth < far is tested: Gaussians behind the camera (depth < 0) project through the
// camera centre to points that can fall inside the image and are kept.
//
// The plain candidate's description:
// Plain: after a barrier, this rank projects every rank's Gaussians (peer pointers) into its
// own CL cameras, in fp64, as the statement's steps 1-9 say. Pair i of [0, RT) is (source s,
// local camera j, Gaussian g) in the output's order: source-major, then camera, then g. One
// thread per pair sets its visibility flag; one thread walks the flags in order, giving each
// visible pair the next output row (and counts them); one thread per pair then writes its
// row (the projection again, the source's opacity and colour through peer pointers), and the
// threads of the rows from the count on write zeros. Under MGK_LOCAL_ONLY only this rank's
// own Gaussians.
#include "../../../candidates/plain_compute.cuh"

namespace {
// Where rank s's pairs start in [0, RT) (first[s] = CL (NL_0 + ... + NL_(s-1))), its
// Gaussian count NL_s, the Gaussian id offset of this rank, and which sources are used.
struct Layout {
  int64_t first[MGK_MAX_WORLD + 1];
  int64_t nl[MGK_MAX_WORLD];
  bool used[MGK_MAX_WORLD];
  int64_t id_offset;  // NL_0 + ... + NL_(R-1): gsplat's rule, the destination's prefix
  int world;
  int64_t cl;
};

// The Gaussians of every rank: peers arrays of the five inputs.
struct Scene {
  void* const* means;
  void* const* quats;
  void* const* scales;
  void* const* opacities;
  void* const* colors;
};

struct Projection {
  bool visible;
  int radius[2];
  double mean2d[2], depth, conic[3];
};

__host__ __device__ inline double bf(const __nv_bfloat16* p, int64_t i) { return double(__bfloat162float(p[i])); }

__host__ __device__ inline void rotation(double w, double x, double y, double z, double R[3][3]) {
  const double n = fmax(sqrt(w * w + x * x + y * y + z * z), 1e-12);
  w /= n, x /= n, y /= n, z /= n;
  R[0][0] = 1 - 2 * (y * y + z * z), R[0][1] = 2 * (x * y - w * z), R[0][2] = 2 * (x * z + w * y);
  R[1][0] = 2 * (x * y + w * z), R[1][1] = 1 - 2 * (x * x + z * z), R[1][2] = 2 * (y * z - w * x);
  R[2][0] = 2 * (x * z - w * y), R[2][1] = 2 * (y * z + w * x), R[2][2] = 1 - 2 * (x * x + y * y);
}

// Gaussian (mean, quat, scale) into the camera (rot, offset) of an iw x ih image.
__host__ __device__ inline Projection project(const __nv_bfloat16* mean, const __nv_bfloat16* quat,
                                              const __nv_bfloat16* scale, const __nv_bfloat16* rot,
                                              const __nv_bfloat16* offset, double iw, double ih) {
  Projection p{};
  double Rc[3][3], R[3][3];
  rotation(1.0, bf(rot, 0), bf(rot, 1), bf(rot, 2), Rc);
  const double t[3] = {bf(offset, 0), bf(offset, 1), bf(offset, 2) + 3.0};
  double pc[3];
  for (int i = 0; i < 3; ++i) pc[i] = Rc[i][0] * bf(mean, 0) + Rc[i][1] * bf(mean, 1) + Rc[i][2] * bf(mean, 2) + t[i];
  p.depth = pc[2];
  if (!(pc[2] < 1e10)) return p;

  // Sigma = R diag(s^2) R^T, then Sigma_c = Rc Sigma Rc^T.
  rotation(bf(quat, 0), bf(quat, 1), bf(quat, 2), bf(quat, 3), R);
  double sw[3][3], a[3][3], sc[3][3];
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) {
      sw[i][k] = 0;
      for (int j = 0; j < 3; ++j) sw[i][k] += R[i][j] * bf(scale, j) * bf(scale, j) * R[k][j];
    }
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) {
      a[i][k] = 0;
      for (int j = 0; j < 3; ++j) a[i][k] += Rc[i][j] * sw[j][k];
    }
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) {
      sc[i][k] = 0;
      for (int j = 0; j < 3; ++j) sc[i][k] += a[i][j] * Rc[k][j];
    }

  // The clamped Jacobian, the 2D covariance plus eps2d, its inverse.
  const double fx = 0.8 * iw, fy = 0.8 * iw, cx = iw / 2, cy = ih / 2;
  const double lim_x = 1.3 * 0.5 * iw / fx, lim_y = 1.3 * 0.5 * ih / fy;
  const double tz = pc[2];
  const double ux = fmin(fmax(pc[0] / tz, -lim_x), lim_x), uy = fmin(fmax(pc[1] / tz, -lim_y), lim_y);
  const double J[2][3] = {{fx / tz, 0, -fx * ux / tz}, {0, fy / tz, -fy * uy / tz}};
  double cov[2][2];
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 2; ++k) {
      cov[i][k] = 0;
      for (int m = 0; m < 3; ++m)
        for (int n = 0; n < 3; ++n) cov[i][k] += J[i][m] * sc[m][n] * J[k][n];
    }
  cov[0][0] += 0.3, cov[1][1] += 0.3;
  const double det = fmax(cov[0][0] * cov[1][1] - cov[0][1] * cov[1][0], 1e-10);
  p.conic[0] = cov[1][1] / det;
  p.conic[1] = -(cov[0][1] + cov[1][0]) / 2 / det;
  p.conic[2] = cov[0][0] / det;

  p.mean2d[0] = fx * pc[0] / tz + cx, p.mean2d[1] = fy * pc[1] / tz + cy;
  p.radius[0] = int(ceil(3.33 * sqrt(cov[0][0])));
  p.radius[1] = int(ceil(3.33 * sqrt(cov[1][1])));
  p.visible = p.mean2d[0] + p.radius[0] > 0 && p.mean2d[0] - p.radius[0] < iw && p.mean2d[1] + p.radius[1] > 0 &&
              p.mean2d[1] - p.radius[1] < ih;
  return p;
}

// Pair i -> its source s, local camera j and Gaussian g.
__device__ inline void pair_of(const Layout& l, int64_t i, int& s, int64_t& j, int64_t& g) {
  s = 0;
  while (i >= l.first[s + 1]) ++s;
  const int64_t local = i - l.first[s];
  j = local / l.nl[s];
  g = local % l.nl[s];
}

__device__ inline Projection project_pair(const Layout& l, const Scene& sc, const __nv_bfloat16* rot,
                                          const __nv_bfloat16* offset, double iw, double ih, int64_t i, int& s,
                                          int64_t& j, int64_t& g) {
  pair_of(l, i, s, j, g);
  Projection p{};
  if (!l.used[s]) return p;  // MGK_LOCAL_ONLY: the other ranks' Gaussians are absent
  return project(static_cast<const __nv_bfloat16*>(sc.means[s]) + 3 * g,
                 static_cast<const __nv_bfloat16*>(sc.quats[s]) + 4 * g,
                 static_cast<const __nv_bfloat16*>(sc.scales[s]) + 3 * g, rot + 3 * j, offset + 3 * j, iw, ih);
}

__global__ void flag_kernel(Layout l, Scene sc, const __nv_bfloat16* rot, const __nv_bfloat16* offset, double iw,
                            double ih, int64_t pairs, char* flags) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < pairs; i += int64_t(gridDim.x) * blockDim.x) {
    int s;
    int64_t j, g;
    flags[i] = project_pair(l, sc, rot, offset, iw, ih, i, s, j, g).visible ? 1 : 0;
  }
}

// One thread: row[i] = the number of visible pairs before pair i; *count = all of them.
__global__ void place_kernel(const char* flags, int64_t pairs, int64_t* row, int64_t* count) {
  int64_t at = 0;
  for (int64_t i = 0; i < pairs; ++i) {
    row[i] = at;
    at += flags[i];
  }
  *count = at;
}

struct Outputs {
  int32_t* camera_ids;
  int32_t* gaussian_ids;
  int32_t* radii;
  float* means2d;
  float* depths;
  float* conics;
  __nv_bfloat16* opacities;
  __nv_bfloat16* colors;
};

__global__ void write_kernel(Layout l, Scene sc, const __nv_bfloat16* rot, const __nv_bfloat16* offset, double iw,
                             double ih, int64_t pairs, const char* flags, const int64_t* row, const int64_t* count,
                             Outputs o) {
  const int64_t n = *count;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < pairs; i += int64_t(gridDim.x) * blockDim.x) {
    if (flags[i]) {
      int s;
      int64_t j, g;
      const Projection p = project_pair(l, sc, rot, offset, iw, ih, i, s, j, g);
      const int64_t k = row[i];
      o.camera_ids[k] = int32_t(j);
      o.gaussian_ids[k] = int32_t(g + l.id_offset);
      for (int e = 0; e < 2; ++e) {
        o.radii[2 * k + e] = p.radius[e];
        o.means2d[2 * k + e] = float(p.mean2d[e]);
      }
      o.depths[k] = float(p.depth);
      for (int e = 0; e < 3; ++e) {
        o.conics[3 * k + e] = float(p.conic[e]);
        o.colors[3 * k + e] = static_cast<const __nv_bfloat16*>(sc.colors[s])[3 * g + e];
      }
      o.opacities[k] = static_cast<const __nv_bfloat16*>(sc.opacities[s])[g];
    }
    if (i >= n) {  // the tail: row i is past the count
      o.camera_ids[i] = 0, o.gaussian_ids[i] = 0, o.depths[i] = 0.0f, o.opacities[i] = __float2bfloat16(0.0f);
      for (int e = 0; e < 2; ++e) o.radii[2 * i + e] = 0, o.means2d[2 * i + e] = 0.0f;
      for (int e = 0; e < 3; ++e) o.conics[3 * i + e] = 0.0f, o.colors[3 * i + e] = __float2bfloat16(0.0f);
    }
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const size_t rt = size_t(mgk::dim(ctx, "RT"));
  return plain::setup(ctx, {}, {rt, rt * 8});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int W = ctx->world_size, r = ctx->rank;
  const int64_t GA = mgk::dim(ctx, "GA"), GD = mgk::dim(ctx, "GD"), S = mgk::dim(ctx, "S"), CL = mgk::dim(ctx, "CL");
  const double IW = double(mgk::dim(ctx, "IW")), IH = double(mgk::dim(ctx, "IH"));
  const int64_t RT = mgk::dim(ctx, "RT");
  auto* flags = static_cast<char*>(plain::state(ctx).local[0]);
  auto* row = static_cast<int64_t*>(plain::state(ctx).local[1]);
  auto* count = static_cast<int64_t*>(out[8].data);
  Layout l{};
  l.world = W;
  l.cl = CL;
  for (int src = 0; src < W; ++src) {
    l.nl[src] = GA + GD * ((src + S) % 3);
    l.first[src + 1] = l.first[src] + CL * l.nl[src];
    l.used[src] = plain::uses(ctx, src);
    if (src < r) l.id_offset += l.nl[src];
  }
  const Scene sc{in[0].peers, in[1].peers, in[2].peers, in[3].peers, in[4].peers};
  const auto* rot = static_cast<const __nv_bfloat16*>(in[5].data);
  const auto* offset = static_cast<const __nv_bfloat16*>(in[6].data);
  const Outputs o{static_cast<int32_t*>(out[0].data), static_cast<int32_t*>(out[1].data),
                  static_cast<int32_t*>(out[2].data), static_cast<float*>(out[3].data),
                  static_cast<float*>(out[4].data),   static_cast<float*>(out[5].data),
                  static_cast<__nv_bfloat16*>(out[6].data), static_cast<__nv_bfloat16*>(out[7].data)};
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's inputs of this call are in place
  flag_kernel<<<plain::blocks_for(RT), 256, 0, s>>>(l, sc, rot, offset, IW, IH, RT, flags);
  MGK_LAUNCH_CHECK(ctx);
  place_kernel<<<1, 1, 0, s>>>(flags, RT, row, count);
  MGK_LAUNCH_CHECK(ctx);
  write_kernel<<<plain::blocks_for(RT), 256, 0, s>>>(l, sc, rot, offset, IW, IH, RT, flags, row, count, o);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
