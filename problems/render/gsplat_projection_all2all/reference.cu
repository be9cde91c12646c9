// Reference: gsplat's distributed packed projection (fully_fused_projection + the all-to-all
// of visible (camera, Gaussian) pairs, as ParallelKernelBench's reference/61 runs it) at
// library speed, in fp64 as the statement defines it. NCCL all-gathers the cameras (their
// rotation and offset, 6 bf16 a camera), one kernel turns them into fp64 view matrices and
// one the Gaussians into their world covariances R diag(s^2) R^T; one kernel projects every
// local Gaussian into every camera, writes each visible pair's 48-byte row (already with
// the local camera id and the destination's Gaussian-id offset) at its dense place and
// counts the rows per destination (warp-aggregated atomics; camera c belongs to rank
// c / CL); CUB's DeviceSelect::Flagged compacts the rows in (camera, Gaussian) order, which
// makes every destination's rows one contiguous run. NCCL exchanges the counts, the host
// reads them (a synchronisation, as ParallelKernelBench's .item() is), and one NCCL group
// sends each destination its run, received in source order straight into a packed buffer
// (ParallelKernelBench sends the 10 float fields, the radii and the ids as three
// all-to-alls); one kernel splits the rows into the eight outputs and zeroes the tail.
#include <cub/cub.cuh>

#include <algorithm>
#include <vector>

#include "mgk/reference_kit.h"
#include "oracle_projection.h"

namespace {

// One visible pair as it travels: 48 bytes.
struct Row {
  int32_t camera, gaussian, radius[2];
  float mean2d[2], depth, conic[3];
  __nv_bfloat16 opacity, color[3];
};
static_assert(sizeof(Row) == 48, "a row is 48 bytes");

constexpr double kEps2d = 0.3, kNear = 0.01, kFar = 1e10, kRadiusScale = 3.33, kCameraDistance = 3;
constexpr int kCameraDoubles = 12;  // R (row-major 3 x 3), t

__host__ __device__ inline void quat_to_rotation(double w, double x, double y, double z, double* R) {
  const double n = fmax(sqrt(w * w + x * x + y * y + z * z), 1e-12);
  w /= n, x /= n, y /= n, z /= n;
  R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

// A camera's view matrix: the rotation of the quaternion (1, rot), translation offset + (0, 0, 3).
__host__ __device__ inline void camera_matrix(const double rot[3], const double offset[3], double* cam) {
  quat_to_rotation(1.0, rot[0], rot[1], rot[2], cam);
  cam[9] = offset[0], cam[10] = offset[1], cam[11] = offset[2] + kCameraDistance;
}

// A Gaussian's world covariance R diag(s^2) R^T: xx, xy, xz, yy, yz, zz.
__host__ __device__ inline void world_covariance(const double quat[4], const double scale[3], double* cov) {
  double R[9];
  quat_to_rotation(quat[0], quat[1], quat[2], quat[3], R);
  const double s2[3] = {scale[0] * scale[0], scale[1] * scale[1], scale[2] * scale[2]};
  const int at[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
  for (int e = 0; e < 6; ++e) {
    const int i = at[e][0], k = at[e][1];
    cov[e] = R[3 * i] * s2[0] * R[3 * k] + R[3 * i + 1] * s2[1] * R[3 * k + 1] + R[3 * i + 2] * s2[2] * R[3 * k + 2];
  }
}

__global__ void cameras_kernel(const __nv_bfloat16* rot, const __nv_bfloat16* offset, int64_t cameras, double* out) {
  const int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (c >= cameras) return;
  double r[3], o[3];
  for (int e = 0; e < 3; ++e) r[e] = __bfloat162float(rot[3 * c + e]), o[e] = __bfloat162float(offset[3 * c + e]);
  camera_matrix(r, o, out + c * kCameraDoubles);
}

__global__ void covariances_kernel(const __nv_bfloat16* quats, const __nv_bfloat16* scales, int64_t n, double* cov) {
  const int64_t g = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (g >= n) return;
  double q[4], s[3];
  for (int e = 0; e < 4; ++e) q[e] = __bfloat162float(quats[4 * g + e]);
  for (int e = 0; e < 3; ++e) s[e] = __bfloat162float(scales[3 * g + e]);
  world_covariance(q, s, cov + 6 * g);
}

// The scale of a float output: |value| + 2^-20 T (host).
inline float scale_of(gsplat_oracle::real v, gsplat_oracle::real t) { return float(std::fabs(v) + 0x1p-20L * t); }

struct Intrinsics {
  double fx, fy, cx, cy, width, height, lim_xp, lim_xn, lim_yp, lim_yn;
};

struct Projected {
  bool visible;
  double radius[2], mean2d[2], depth, conic[3];
};

// The centre p (world) with world covariance s (6) into the camera cam (12).
__host__ __device__ inline Projected project(const double* cam, const double* s, const double p[3], const Intrinsics& k) {
  Projected out{};
  double pc[3];
  for (int r = 0; r < 3; ++r) pc[r] = cam[3 * r] * p[0] + cam[3 * r + 1] * p[1] + cam[3 * r + 2] * p[2] + cam[9 + r];
  const double tx = pc[0], ty = pc[1], tz = pc[2];
  out.depth = tz;
  if (!(tz > kNear && tz < kFar)) return out;
  // Sigma_c = Rc Sigma Rc^T.
  const double S[9] = {s[0], s[1], s[2], s[1], s[3], s[4], s[2], s[4], s[5]};
  double A[9];  // Rc Sigma
  for (int r = 0; r < 3; ++r)
    for (int q = 0; q < 3; ++q) A[3 * r + q] = cam[3 * r] * S[q] + cam[3 * r + 1] * S[3 + q] + cam[3 * r + 2] * S[6 + q];
  double C[9];  // (Rc Sigma) Rc^T
  for (int r = 0; r < 3; ++r)
    for (int q = 0; q < 3; ++q)
      C[3 * r + q] = A[3 * r] * cam[3 * q] + A[3 * r + 1] * cam[3 * q + 1] + A[3 * r + 2] * cam[3 * q + 2];
  const double ux = fmin(fmax(tx / tz, -k.lim_xn), k.lim_xp), uy = fmin(fmax(ty / tz, -k.lim_yn), k.lim_yp);
  const double j00 = k.fx / tz, j02 = -k.fx * ux / tz, j11 = k.fy / tz, j12 = -k.fy * uy / tz;
  const double c00 = j00 * j00 * C[0] + 2 * j00 * j02 * C[2] + j02 * j02 * C[8] + kEps2d;
  const double c01 = j00 * j11 * C[1] + j00 * j12 * C[2] + j02 * j11 * C[7] + j02 * j12 * C[8];
  const double c11 = j11 * j11 * C[4] + 2 * j11 * j12 * C[5] + j12 * j12 * C[8] + kEps2d;
  const double det = fmax(c00 * c11 - c01 * c01, 1e-10);
  out.mean2d[0] = k.fx * tx / tz + k.cx, out.mean2d[1] = k.fy * ty / tz + k.cy;
  out.radius[0] = ceil(kRadiusScale * sqrt(c00)), out.radius[1] = ceil(kRadiusScale * sqrt(c11));
  out.conic[0] = c11 / det, out.conic[1] = -c01 / det, out.conic[2] = c00 / det;
  out.visible = out.mean2d[0] + out.radius[0] > 0 && out.mean2d[0] - out.radius[0] < k.width &&
                out.mean2d[1] + out.radius[1] > 0 && out.mean2d[1] - out.radius[1] < k.height;
  return out;
}

// Thread i = c n + g: Gaussian g in camera c. A visible pair writes its row at rows[i] and
// flag 1; the rows per destination are counted, one atomic per warp and destination.
__global__ void project_kernel(const double* cams, int64_t cameras, int64_t cl, const double* cov3,
                               const __nv_bfloat16* means, const __nv_bfloat16* opacities, const __nv_bfloat16* colors,
                               int64_t n, Intrinsics k, const int64_t* dest_offset, Row* rows, char* flags,
                               int64_t* counts) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const bool in_range = i < cameras * n;
  bool visible = false;
  int dest = -1;
  if (in_range) {
    const int64_t c = i / n, g = i % n;
    dest = int(c / cl);
    const double p[3] = {__bfloat162float(means[3 * g]), __bfloat162float(means[3 * g + 1]),
                         __bfloat162float(means[3 * g + 2])};
    const Projected q = project(cams + c * kCameraDoubles, cov3 + 6 * g, p, k);
    visible = q.visible;
    if (visible) {
      Row row;
      row.camera = int32_t(c - dest * cl);
      row.gaussian = int32_t(g + dest_offset[dest]);
      row.radius[0] = int32_t(q.radius[0]), row.radius[1] = int32_t(q.radius[1]);
      row.mean2d[0] = float(q.mean2d[0]), row.mean2d[1] = float(q.mean2d[1]);
      row.depth = float(q.depth);
      for (int e = 0; e < 3; ++e) row.conic[e] = float(q.conic[e]), row.color[e] = colors[3 * g + e];
      row.opacity = opacities[g];
      rows[i] = row;
    }
    flags[i] = visible ? 1 : 0;
  }
  const unsigned same = __match_any_sync(0xffffffffu, dest);
  const unsigned seen = __ballot_sync(0xffffffffu, visible);
  const int lane = threadIdx.x % 32;
  if (dest >= 0 && lane == __ffs(same) - 1 && (same & seen))
    atomicAdd(reinterpret_cast<unsigned long long*>(counts + dest), (unsigned long long)__popc(same & seen));
}

// Output row k: the fields of received row k, zeros from `received` on.
__global__ void unpack_kernel(const Row* rows, int64_t received, int64_t capacity, int32_t* camera_ids,
                              int32_t* gaussian_ids, int32_t* radii, float* means2d, float* depths, float* conics,
                              __nv_bfloat16* opacities, __nv_bfloat16* colors) {
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < capacity; k += int64_t(gridDim.x) * blockDim.x) {
    Row r{};
    if (k < received) r = rows[k];
    camera_ids[k] = r.camera;
    gaussian_ids[k] = r.gaussian;
    radii[2 * k] = r.radius[0], radii[2 * k + 1] = r.radius[1];
    means2d[2 * k] = r.mean2d[0], means2d[2 * k + 1] = r.mean2d[1];
    depths[k] = r.depth;
    for (int e = 0; e < 3; ++e) conics[3 * k + e] = r.conic[e], colors[3 * k + e] = r.color[e];
    opacities[k] = r.opacity;
  }
}

struct GsplatProjectionAll2All : mgk::Reference {
  using Reference::Reference;
  const int64_t GA = dim("GA"), GD = dim("GD"), S = dim("S"), CL = dim("CL"), IW = dim("IW"), IH = dim("IH");
  const int64_t n = ctx->inputs[0].shape[0];          // this rank's Gaussians
  const int64_t capacity = ctx->outputs[0].shape[0];  // RT: CL times every rank's Gaussians
  int64_t cameras = 0;                                // W CL
  std::vector<int64_t> offset;                        // offset[d]: Gaussians of ranks 0..d-1
  mgk::DeviceBuffer<int64_t> dest_offset;
  mgk::DeviceBuffer<__nv_bfloat16> all_rot, all_offset;
  mgk::DeviceBuffer<double> cams, cov3;
  mgk::DeviceBuffer<Row> rows, send, recv;
  mgk::DeviceBuffer<char> flags;
  mgk::DeviceBuffer<int> selected;
  mgk::DeviceBuffer<int64_t> counts;  // 2W: sent to each rank, received from each rank
  mgk::DeviceBuffer<char> select_temp;
  size_t select_temp_bytes = 0;
  std::vector<int64_t> host_counts;
  Intrinsics k{};
  int64_t received = 0;  // the filled length, copied to count

  int setup() {
    const int W = world();
    cameras = W * CL;
    offset.assign(W + 1, 0);
    for (int d = 0; d < W; ++d) offset[d + 1] = offset[d] + GA + GD * ((d + S) % 3);
    if (offset[rank() + 1] - offset[rank()] != n || CL * offset[W] != capacity || offset[W] > INT32_MAX)
      return mgk::set_error(ctx, "the spec's shapes do not follow NL_r = GA + GD ((r + S) %% 3)");
    MGK_CUDA_TRY(ctx, dest_offset.allocate(W));
    MGK_CUDA_TRY(ctx, cudaMemcpy(dest_offset.get(), offset.data(), size_t(W) * 8, cudaMemcpyHostToDevice));
    MGK_CUDA_TRY(ctx, all_rot.allocate(cameras * 3));
    MGK_CUDA_TRY(ctx, all_offset.allocate(cameras * 3));
    MGK_CUDA_TRY(ctx, cudaMemset(all_rot.get(), 0, size_t(cameras) * 3 * 2));
    MGK_CUDA_TRY(ctx, cudaMemset(all_offset.get(), 0, size_t(cameras) * 3 * 2));
    MGK_CUDA_TRY(ctx, cams.allocate(cameras * kCameraDoubles));
    MGK_CUDA_TRY(ctx, cov3.allocate(std::max<int64_t>(n, 1) * 6));
    const int64_t pairs = cameras * n;
    MGK_CUDA_TRY(ctx, rows.allocate(pairs));
    MGK_CUDA_TRY(ctx, send.allocate(pairs));
    MGK_CUDA_TRY(ctx, recv.allocate(capacity));
    MGK_CUDA_TRY(ctx, flags.allocate(pairs));
    MGK_CUDA_TRY(ctx, selected.allocate(1));
    MGK_CUDA_TRY(ctx, counts.allocate(2 * W));
    MGK_CUDA_TRY(ctx, cub::DeviceSelect::Flagged(nullptr, select_temp_bytes, rows.get(), flags.get(), send.get(),
                                                 selected.get(), int(pairs)));
    MGK_CUDA_TRY(ctx, select_temp.allocate(std::max<size_t>(select_temp_bytes, 16)));
    host_counts.resize(2 * W);
    const double w = double(IW), h = double(IH), f = 0.8 * w;
    k = {f, f, w / 2, h / 2, w, h, 0, 0, 0, 0};
    const double tan_x = 0.5 * w / f, tan_y = 0.5 * h / f;
    k.lim_xp = (w - k.cx) / f + 0.3 * tan_x, k.lim_xn = k.cx / f + 0.3 * tan_x;
    k.lim_yp = (h - k.cy) / f + 0.3 * tan_y, k.lim_yn = k.cy / f + 0.3 * tan_y;
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int W = world(), r = rank();
    const auto [means, quats, scales, opacities, colors, rot, cam_offset] =
        mgk::tensor_data<const __nv_bfloat16, const __nv_bfloat16, const __nv_bfloat16, const __nv_bfloat16,
                         const __nv_bfloat16, const __nv_bfloat16, const __nv_bfloat16>(in);
    const auto [camera_ids, gaussian_ids, radii, means2d, depths, conics, opacities_out, colors_out] =
        mgk::tensor_data<int32_t, int32_t, int32_t, float, float, float, __nv_bfloat16, __nv_bfloat16>(out);
    const ncclComm_t group = comm();

    // Every rank's cameras, then the view matrices and the local covariances.
    if (group) {
      MGK_NCCL_TRY(ctx, ncclGroupStart());
      MGK_NCCL_TRY(ctx, ncclAllGather(rot, all_rot.get(), size_t(3 * CL), ncclBfloat16, group, st));
      MGK_NCCL_TRY(ctx, ncclAllGather(cam_offset, all_offset.get(), size_t(3 * CL), ncclBfloat16, group, st));
      MGK_NCCL_TRY(ctx, ncclGroupEnd());
    } else {  // bench/compute: the own cameras alone
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(all_rot + 3 * CL * r, rot, size_t(3 * CL) * 2, cudaMemcpyDeviceToDevice, st));
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(all_offset + 3 * CL * r, cam_offset, size_t(3 * CL) * 2,
                                        cudaMemcpyDeviceToDevice, st));
    }
    cameras_kernel<<<int((cameras + 127) / 128), 128, 0, st>>>(all_rot, all_offset, cameras, cams);
    MGK_LAUNCH_CHECK(ctx);
    if (n > 0) {
      covariances_kernel<<<int((n + 255) / 256), 256, 0, st>>>(quats, scales, n, cov3);
      MGK_LAUNCH_CHECK(ctx);
    }

    // Project, count per destination, compact in (camera, Gaussian) order.
    int64_t* sent_counts = counts;
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(sent_counts, 0, size_t(W) * 8, st));
    const int64_t pairs = cameras * n;
    if (pairs > 0) {
      project_kernel<<<int((pairs + 255) / 256), 256, 0, st>>>(cams, cameras, CL, cov3, means, opacities, colors, n, k,
                                                               dest_offset, rows, flags, sent_counts);
      MGK_LAUNCH_CHECK(ctx);
      size_t temp = select_temp_bytes;
      MGK_CUDA_TRY(ctx, cub::DeviceSelect::Flagged(select_temp.get(), temp, rows.get(), flags.get(), send.get(),
                                                   selected.get(), int(pairs), st));
    }
    if (!group) return 0;  // bench/compute: the projection alone

    // The count exchange, read by the host.
    mgk::ExchangeSizes sizes;
    if (int rc = mgk::exchange_sizes(ctx, group, counts, host_counts, pairs, capacity, sizes, st)) return rc;
    const auto& [sent, got, send_at, recv_at] = sizes;
    received = recv_at[W];

    // The rows: every destination its run, received in source order.
    if (int rc = mgk::exchange_blocks(ctx, group, send, sent, send_at.data(), recv, got, recv_at.data(), sizeof(Row), st))
      return rc;

    const int blocks = int(std::min<int64_t>((capacity + 255) / 256, 8192));
    unpack_kernel<<<blocks, 256, 0, st>>>(recv, received, capacity, camera_ids, gaussian_ids, radii, means2d, depths,
                                          conics, opacities_out, colors_out);
    MGK_LAUNCH_CHECK(ctx);
    // From pageable memory: staged before the call returns, so `received` may change after.
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(out[8].data, &received, 8, cudaMemcpyHostToDevice, st));
    return 0;
  }

  // The rows this rank receives, by a host walk in long double (oracle_projection.h) over
  // every source rank s, each local camera j and every Gaussian g of s in order: every
  // rank's Gaussians and this rank's cameras are regenerated on the device (as the harness
  // drew them), read back, and each visible pair appended. A decision within kMargin of its
  // boundary fails the call (the inputs would not judge an fp64 implementation fairly; the
  // odds: oracle_projection.h's kMargin). Scale of a float output:
  // |value| + 2^-20 T, T the magnitude its rounding error scales with.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int W = world(), r = rank();
    const int64_t total = offset[W];
    // Widths of the regenerated inputs: means 3, quats 4, scales 3, opacities 1, colors 3.
    const int width[5] = {3, 4, 3, 1, 3};
    mgk::oracle::Scratch scratch(st);
    std::vector<std::vector<double>> host(7);
    for (int t = 0; t < 5; ++t) {
      double* d = scratch.get<double>(total * width[t]);
      if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
      const mgk_input_gen g = a->gens[t];
      for (int s = 0; s < W; ++s) {
        double* dst = d + offset[s] * width[t];
        MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                              (offset[s + 1] - offset[s]) * width[t],
                              [=] __device__(int64_t i) { dst[i] = mgk::gen_value(g, s, i); }, st));
      }
      host[t].resize(total * width[t]);
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(host[t].data(), d, size_t(total * width[t]) * 8, cudaMemcpyDeviceToHost, st));
    }
    for (int t = 5; t < 7; ++t) {
      double* d = scratch.get<double>(3 * CL);
      if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
      const mgk_input_gen g = a->gens[t];
      MGK_CUDA_TRY(ctx, mgk::oracle::for_each(3 * CL, [=] __device__(int64_t i) { d[i] = mgk::gen_value(g, r, i); }, st));
      host[t].resize(3 * CL);
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(host[t].data(), d, size_t(3 * CL) * 8, cudaMemcpyDeviceToHost, st));
    }
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));

    const int64_t cap = capacity;
    std::vector<int64_t> cam_id(cap, 0), gid(cap, 0), rad(2 * cap, 0);
    std::vector<double> m2d(2 * cap, 0), dep(cap, 0), con(3 * cap, 0), opa(cap, 0), col(3 * cap, 0);
    std::vector<float> s_m2d(2 * cap, 0), s_dep(cap, 0), s_con(3 * cap, 0);
    std::vector<gsplat_oracle::Camera> cam(CL);
    for (int64_t j = 0; j < CL; ++j) cam[j] = gsplat_oracle::camera(&host[5][3 * j], &host[6][3 * j], IW, IH);
    int64_t count = 0;
    for (int s = 0; s < W; ++s)
      for (int64_t j = 0; j < CL; ++j)
        for (int64_t g = offset[s]; g < offset[s + 1]; ++g) {
          const gsplat_oracle::Projection p = gsplat_oracle::project(cam[j], &host[0][3 * g], &host[1][4 * g], &host[2][3 * g]);
          if (!p.fair)
            return mgk::set_error(ctx, "oracle: Gaussian %lld of rank %d in camera %lld of rank %d lies within 2^-47 T of a "
                                  "culling or radius boundary: this call's inputs cannot judge fp64 implementations "
                                  "fairly (odds about 2e-11 a pair; run again)",
                                  (long long)(g - offset[s]), s, (long long)j, r);
          if (!p.visible) continue;
          if (count >= cap) return mgk::set_error(ctx, "oracle: more rows than the capacity %lld", (long long)cap);
          const int64_t k = count++;
          cam_id[k] = j;
          gid[k] = (g - offset[s]) + offset[r];  // gsplat's rule: the destination's offset
          for (int e = 0; e < 2; ++e) {
            rad[2 * k + e] = p.radius[e];
            m2d[2 * k + e] = double(p.mean2d[e]);
            s_m2d[2 * k + e] = scale_of(p.mean2d[e], p.t_mean2d[e]);
          }
          dep[k] = double(p.depth);
          s_dep[k] = scale_of(p.depth, p.t_depth);
          for (int e = 0; e < 3; ++e) {
            con[3 * k + e] = double(p.conic[e]);
            s_con[3 * k + e] = scale_of(p.conic[e], p.t_conic[e]);
            col[3 * k + e] = host[4][3 * g + e];
          }
          opa[k] = host[3][g];
        }

    auto put = [&](int o, const void* data, size_t bytes) {
      return cudaMemcpyAsync(a->expected[o], data, bytes, cudaMemcpyHostToDevice, st);
    };
    MGK_CUDA_TRY(ctx, put(0, cam_id.data(), size_t(cap) * 8));
    MGK_CUDA_TRY(ctx, put(1, gid.data(), size_t(cap) * 8));
    MGK_CUDA_TRY(ctx, put(2, rad.data(), size_t(2 * cap) * 8));
    MGK_CUDA_TRY(ctx, put(3, m2d.data(), size_t(2 * cap) * 8));
    MGK_CUDA_TRY(ctx, put(4, dep.data(), size_t(cap) * 8));
    MGK_CUDA_TRY(ctx, put(5, con.data(), size_t(3 * cap) * 8));
    MGK_CUDA_TRY(ctx, put(6, opa.data(), size_t(cap) * 8));
    MGK_CUDA_TRY(ctx, put(7, col.data(), size_t(3 * cap) * 8));
    MGK_CUDA_TRY(ctx, put(8, &count, 8));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(a->scale[3], s_m2d.data(), size_t(2 * cap) * 4, cudaMemcpyHostToDevice, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(a->scale[4], s_dep.data(), size_t(cap) * 4, cudaMemcpyHostToDevice, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(a->scale[5], s_con.data(), size_t(3 * cap) * 4, cudaMemcpyHostToDevice, st));
    // The host vectors must outlive the copies.
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(GsplatProjectionAll2All)
