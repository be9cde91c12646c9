// The oracle's projection of one Gaussian into one camera, on the host in long double (a
// 64-bit significand, 2^11 times finer than the fp64 that implementations must use), by a
// code path of its own: gsplat's fully_fused_projection as ParallelKernelBench's
// reference/61 writes it (quaternion -> rotation, R diag(s^2) R^T, world -> camera, the
// clamped perspective Jacobian, J Sigma J^T + eps2d I, conic, depth, radius = ceil(3.33
// sqrt(diag)), culling by the near and far planes and the image), plus for every value the
// magnitude its rounding error scales with (T) and a check that every discrete decision
// (depth > near, each radius's ceil, the four image tests) lies at least kMargin T from its
// boundary, so that every fp64 implementation decides as the exact arithmetic does.
// Host code only: reference.cu includes it, and so can a CPU test.
#pragma once
#include <cmath>
#include <cstdint>

namespace gsplat_oracle {

using real = long double;

constexpr real kEps2d = 0.3L, kNear = 0.01L, kFar = 1e10L, kRadiusScale = 3.33L;
constexpr real kCameraDistance = 3;  // every camera sits 3 units behind the origin along its axis
constexpr real kFocal = 0.8L;        // fx = fy = 0.8 * image width, as ParallelKernelBench's 0.8 * 512
// A decision is fair when its quantity lies at least kMargin T from the boundary, T the
// magnitude the quantity's rounding error scales with (first order, through every step). An
// fp64 computation of this problem errs by at most 1.9 u64 T (u64 = 2^-53; measured against
// this code over 8e5 pairs at 512 x 512, the reference's order and a candidate's, with and
// without FMA; 3.8 with the narrower T of a coordinate's own terms, over 1e6 pairs at three
// image sizes), so 2^-47 = 64 u64 leaves a factor above 30 for other orders. Random
// inputs came that close to a boundary with odds of about 2e-11 a pair (measured at 2^-16 to
// 2^-28, where they fall 12 times per 4 bits: 2.7e-5 at 2^-24), 6e-5 a call at `large` and
// W = 8, with a camera coordinate's T the sum of |terms| of its own row; T is now wider (below),
// which raises the odds by at most about 3 times.
constexpr real kMargin = 0x1p-47L;

// The rotation of quaternion (w, x, y, z) after normalisation (gsplat's _quat_to_rotmat).
inline void rotation(real w, real x, real y, real z, real R[3][3]) {
  const real n = std::sqrt(w * w + x * x + y * y + z * z);
  const real d = n > 1e-12L ? n : 1e-12L;
  w /= d, x /= d, y /= d, z /= d;
  R[0][0] = 1 - 2 * (y * y + z * z), R[0][1] = 2 * (x * y - w * z), R[0][2] = 2 * (x * z + w * y);
  R[1][0] = 2 * (x * y + w * z), R[1][1] = 1 - 2 * (x * x + z * z), R[1][2] = 2 * (y * z - w * x);
  R[2][0] = 2 * (x * z - w * y), R[2][1] = 2 * (y * z + w * x), R[2][2] = 1 - 2 * (x * x + y * y);
}

// A camera: world -> camera rotation from the quaternion (1, rot) and translation
// offset + (0, 0, kCameraDistance); pinhole intrinsics from the image size.
struct Camera {
  real R[3][3], t[3];
  real fx, fy, cx, cy, width, height;
};

inline Camera camera(const double rot[3], const double offset[3], int64_t width, int64_t height) {
  Camera c;
  rotation(1, rot[0], rot[1], rot[2], c.R);
  c.t[0] = offset[0], c.t[1] = offset[1], c.t[2] = real(offset[2]) + kCameraDistance;
  c.width = real(width), c.height = real(height);
  c.fx = c.fy = kFocal * c.width;
  c.cx = c.width / 2, c.cy = c.height / 2;
  return c;
}

struct Projection {
  bool visible = false;   // depth in (near, far), inside the image with its radius
  bool fair = true;       // false: a decision within kMargin T of its boundary
  int64_t radius[2] = {0, 0};
  real mean2d[2] = {0, 0}, depth = 0, conic[3] = {0, 0, 0};
  real t_mean2d[2] = {0, 0}, t_depth = 0, t_conic[3] = {0, 0, 0};  // the magnitudes T
  real radius_arg[2] = {0, 0}, t_radius_arg[2] = {0, 0};              // 3.33 sqrt(cov_aa) and its T
};

// Whether v's ceil is decided: v at least kMargin * t from every integer.
inline bool ceil_fair(real v, real t) {
  const real f = v - std::floor(v);
  return std::fmin(f, 1 - f) >= kMargin * t;
}

inline Projection project(const Camera& c, const double mean[3], const double quat[4], const double scale[3]) {
  Projection p;
  // World -> camera. A coordinate's T is sum_k |t_k| + sum_j |m_j|, not its own row's sum of
  // |terms|: an entry of the rotation can be near 0 by cancellation (R20 = 2 (xz - wy)) and
  // still err by O(u) absolutely, and an fp64 candidate may go through the camera centre
  // (R (m - c), c = -R^T t), whose terms are of size |t| + |m| (|R_ij| <= 1).
  real pc[3], tp[3], size = 0;
  for (int k = 0; k < 3; ++k) size += std::fabs(c.t[k]) + std::fabs(real(mean[k]));
  for (int i = 0; i < 3; ++i) {
    pc[i] = c.t[i];
    tp[i] = size;
    for (int j = 0; j < 3; ++j) pc[i] += c.R[i][j] * real(mean[j]);
  }
  const real tx = pc[0], ty = pc[1], tz = pc[2];
  p.depth = tz;
  p.t_depth = tp[2];
  if (std::fabs(tz - kNear) < kMargin * (tp[2] + kNear)) p.fair = false;
  if (!(tz > kNear && tz < kFar)) return p;  // culled by depth: radius 0

  // Covariance R diag(s^2) R^T in the world, then Rc Sigma Rc^T in the camera.
  real R[3][3];
  rotation(quat[0], quat[1], quat[2], quat[3], R);
  real sw[3][3], sc[3][3], tmp[3][3];
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) {
      sw[i][k] = 0;
      for (int j = 0; j < 3; ++j) sw[i][k] += R[i][j] * real(scale[j]) * real(scale[j]) * R[k][j];
    }
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) {
      tmp[i][k] = 0;
      for (int j = 0; j < 3; ++j) tmp[i][k] += c.R[i][j] * sw[j][k];
    }
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) {
      sc[i][k] = 0;
      for (int j = 0; j < 3; ++j) sc[i][k] += tmp[i][j] * c.R[k][j];
    }
  const real trace = real(scale[0]) * scale[0] + real(scale[1]) * scale[1] + real(scale[2]) * scale[2];

  // The perspective Jacobian at the mean, its x/z and y/z clamped to 1.3 times the half field of view.
  const real tan_x = 0.5L * c.width / c.fx, tan_y = 0.5L * c.height / c.fy;
  const real lim_xp = (c.width - c.cx) / c.fx + 0.3L * tan_x, lim_xn = c.cx / c.fx + 0.3L * tan_x;
  const real lim_yp = (c.height - c.cy) / c.fy + 0.3L * tan_y, lim_yn = c.cy / c.fy + 0.3L * tan_y;
  const real ux = std::fmin(std::fmax(tx / tz, -lim_xn), lim_xp), uy = std::fmin(std::fmax(ty / tz, -lim_yn), lim_yp);
  const real J[2][3] = {{c.fx / tz, 0, -c.fx * (tz * ux) / (tz * tz)}, {0, c.fy / tz, -c.fy * (tz * uy) / (tz * tz)}};
  // The magnitudes of J's entries' rounding errors: t_z's relative error scales with tp[2] /
  // |t_z|, u's with (tp[0 or 1] + |u| tp[2]) / |t_z| (large where t_x cancels or t_z is small).
  const real az = std::fabs(tz), rz = 1 + tp[2] / az;
  const real tj[2] = {c.fx / az * (rz + ((tp[0] + std::fabs(ux) * tp[2]) / az + std::fabs(ux) * rz)),
                      c.fy / az * (rz + ((tp[1] + std::fabs(uy) * tp[2]) / az + std::fabs(uy) * rz))};
  real cov[2][2], tcov[2][2];
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      cov[a][b] = 0;
      for (int k = 0; k < 3; ++k)
        for (int l = 0; l < 3; ++l) cov[a][b] += J[a][k] * sc[k][l] * J[b][l];
      // |Sigma_c[k][l]| <= trace(Sigma); ja: row a's sum of |J|, tj[a] its errors' magnitude:
      // first order, (dJ_a J_b + J_a dJ_b + J_a J_b) trace.
      const real ja = std::fabs(J[a][0]) + std::fabs(J[a][1]) + std::fabs(J[a][2]);
      const real jb = std::fabs(J[b][0]) + std::fabs(J[b][1]) + std::fabs(J[b][2]);
      tcov[a][b] = (tj[a] * jb + ja * tj[b] + ja * jb) * trace;
    }
  cov[0][0] += kEps2d, cov[1][1] += kEps2d;
  tcov[0][0] += kEps2d, tcov[1][1] += kEps2d;

  // Conic: the inverse of the 2D covariance (the determinant is at least eps2d^2 = 0.09, so
  // gsplat's clamp at 1e-10 never acts).
  const real c01 = (cov[0][1] + cov[1][0]) / 2, t01 = tcov[0][1];
  const real det = std::fmax(cov[0][0] * cov[1][1] - cov[0][1] * cov[1][0], 1e-10L);
  const real tdet = tcov[0][0] * cov[1][1] + cov[0][0] * tcov[1][1] + 2 * std::fabs(c01) * t01;
  p.conic[0] = cov[1][1] / det, p.conic[1] = -c01 / det, p.conic[2] = cov[0][0] / det;
  p.t_conic[0] = (tcov[1][1] + cov[1][1] * tdet / det) / det;
  p.t_conic[1] = (t01 + std::fabs(c01) * tdet / det) / det;
  p.t_conic[2] = (tcov[0][0] + cov[0][0] * tdet / det) / det;

  // Projected mean (unclamped).
  p.mean2d[0] = c.fx * tx / tz + c.cx, p.mean2d[1] = c.fy * ty / tz + c.cy;
  p.t_mean2d[0] = c.fx * (tp[0] + std::fabs(tx) * tp[2] / tz) / tz + c.cx;
  p.t_mean2d[1] = c.fy * (tp[1] + std::fabs(ty) * tp[2] / tz) / tz + c.cy;

  // Radii: ceil(3.33 sqrt(diagonal)); v's relative error is half the diagonal's.
  bool radius_fair = true;
  for (int a = 0; a < 2; ++a) {
    const real v = kRadiusScale * std::sqrt(cov[a][a]);
    p.radius[a] = int64_t(std::ceil(v));
    p.radius_arg[a] = v, p.t_radius_arg[a] = v * tcov[a][a] / cov[a][a];
    if (!ceil_fair(v, p.t_radius_arg[a])) radius_fair = false;
  }

  // Inside the image: each of the four tests at least kMargin T from its boundary.
  const real rx = real(p.radius[0]), ry = real(p.radius[1]);
  const real mx = p.mean2d[0], my = p.mean2d[1];
  const real qx[2] = {mx + rx, mx - rx - c.width}, qy[2] = {my + ry, my - ry - c.height};
  const real tqx = p.t_mean2d[0] + rx + c.width, tqy = p.t_mean2d[1] + ry + c.height;
  for (int k = 0; k < 2; ++k)
    if (std::fabs(qx[k]) < kMargin * tqx || std::fabs(qy[k]) < kMargin * tqy) p.fair = false;
  p.visible = qx[0] > 0 && qx[1] < 0 && qy[0] > 0 && qy[1] < 0;
  // An undecided radius matters where the pair is visible (the radius is an output) or where
  // a radius one larger would make it visible; off the image by more, its ceil changes nothing.
  const bool near_inside = mx + rx + 1 > 0 && mx - rx - 1 < c.width && my + ry + 1 > 0 && my - ry - 1 < c.height;
  if (!radius_fair && near_inside) p.fair = false;
  if (!p.visible) p.radius[0] = p.radius[1] = 0;
  return p;
}

}  // namespace gsplat_oracle
