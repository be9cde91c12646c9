// Reference, as ParallelKernelBench's (Savanna's Hyena operator under context parallelism) with
// two of its four all-to-alls left out because nothing needs them:
//  1. z = x2 * v, rounded to bf16 (PyTorch's bf16 product), at this rank's own positions, packed
//     by destination: rank d gets channels [d CB, d CB + n_d) (CB = ceil(C / W), n_d what is
//     left of C there, possibly 0). ParallelKernelBench sends x1, x2 and v and multiplies after;
//     the product is elementwise, so sending z alone is the same values at a third of the bytes.
//  2. One all-to-all (an NCCL group of send/recv with the peers, the own chunk by a device copy;
//     uneven chunks): rank r receives its channels' z at every rank's positions.
//  3. The received chunks out of zigzag into natural order (rank s holds global chunks s and
//     2W - 1 - s), each (batch, channel) row zero-padded to the FFT length N.
//  4. The causal long convolution by cuFFT in fp32: R2C of z and of the filters, a pointwise
//     product (times 1 / N), C2R. N is the smallest even 2^a 3^b 5^c 7^d >= L + min(K, L) - 1:
//     long enough that nothing wraps into the kept positions [0, L), so the circular convolution
//     is the linear one there (ParallelKernelBench takes N = 2L, 1.6 times as long at `pkb`).
//     The skip term bias * z is folded into the filter (tap 0 gets h[0] + bias): the same sum,
//     no second read of z.
//  5. y rounded to bf16 (ParallelKernelBench's cast) and packed into zigzag order by destination
//     (rank d's two chunks, d and 2W - 1 - d); one all-to-all back to sequence sharding.
//  6. out = x1 * y rounded to bf16, transposed to [B, 2 LC, C] through shared memory. The gate
//     x1 never travels: ParallelKernelBench sends it to the channel owner and multiplies there,
//     the same product of the same two bf16 values.
// So every rounding point of ParallelKernelBench's is kept (z, the cast of y, the product with
// x1) and the fp32 FFT is the only difference in the arithmetic, within the bound's FFT term.
// FFT plans are made once at setup; the filter's transform is redone every call (h is an input).
#include <cufft.h>

#include <algorithm>

#include "../../fft/fft_common.cuh"  // fft::RealPlan, FFT_CUFFT_TRY

namespace {

using bf16 = __nv_bfloat16;
constexpr int kThreads = 256;

// The smallest even n >= m whose only prime factors are 2, 3, 5 and 7 (cuFFT's fastest radices).
int64_t fft_length(int64_t m) {
  for (int64_t n = std::max<int64_t>(m + (m & 1), 2);; n += 2) {
    int64_t rest = n;
    for (int p : {2, 3, 5, 7})
      while (rest % p == 0) rest /= p;
    if (rest == 1) return n;
  }
}

// send[chunk d][b][c - d CB][j] = bf16(x2[b][c][j] v[b][c][j]): chunk d (channels [d CB, d CB +
// n_d) of every batch) starts at B T2 d CB, rows of T2 = 2 LC positions.
__global__ void gate_pack_kernel(const bf16* __restrict__ x2, const bf16* __restrict__ v, bf16* __restrict__ send,
                                 int64_t B, int64_t C, int64_t T2, int64_t CB) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < B * C * T2;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = i % T2, row = i / T2, c = row % C, b = row / C;
    const int64_t first = c / CB * CB, n = min(CB, C - first);
    send[B * T2 * first + (b * n + c - first) * T2 + j] =
        __float2bfloat16_rn(__bfloat162float(x2[i]) * __bfloat162float(v[i]));  // exact in fp32, rounded once
  }
}

// zin[row][t] (row = b nc + cl, rows of N) = z at global position t of this rank's channel cl,
// from rank s's chunk of the first all-to-all (global chunk q = t / LC is on rank q or 2W - 1 - q,
// at column 0 or LC of its two); zeros from L to N.
__global__ void unzigzag_kernel(const bf16* __restrict__ recv, float* __restrict__ zin, int64_t rows, int64_t LC,
                                int64_t W, int64_t N) {
  const int64_t T2 = 2 * LC, L = W * T2;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * N;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i % N, row = i / N;
    float val = 0;
    if (t < L) {
      const int64_t q = t / LC, s = q < W ? q : 2 * W - 1 - q, col = (q < W ? 0 : LC) + t % LC;
      val = __bfloat162float(recv[(s * rows + row) * T2 + col]);
    }
    zin[i] = val;
  }
}

// hin[cl][s] = h[c0 + cl][s] for s < keff (tap 0 plus the bias), zeros to N.
__global__ void filter_kernel(const bf16* __restrict__ h, const bf16* __restrict__ bias, float* __restrict__ hin,
                              int64_t nc, int64_t c0, int64_t K, int64_t keff, int64_t N) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < nc * N;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t s = i % N, c = c0 + i / N;
    float val = 0;
    if (s < keff) val = __bfloat162float(h[c * K + s]) + (s == 0 ? __bfloat162float(bias[c]) : 0.0f);
    hin[i] = val;
  }
}

// zf[row][k] *= hf[row % nc][k] / N: the spectra's product, normalised for the unnormalised C2R.
__global__ void spectra_product_kernel(cufftComplex* __restrict__ zf, const cufftComplex* __restrict__ hf,
                                       int64_t rows, int64_t nc, int64_t nf, float inv_n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * nf;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = i % nf, cl = (i / nf) % nc;
    const cufftComplex a = zf[i], b = hf[cl * nf + k];
    zf[i] = make_float2((a.x * b.x - a.y * b.y) * inv_n, (a.x * b.y + a.y * b.x) * inv_n);
  }
}

// send[d][row][j] = bf16(y[row][g_d(j)]): rank d's positions (global chunk d, then 2W - 1 - d)
// of every row, chunk d at d rows T2.
__global__ void rezigzag_pack_kernel(const float* __restrict__ y, bf16* __restrict__ send, int64_t rows, int64_t LC,
                                     int64_t W, int64_t N) {
  const int64_t T2 = 2 * LC;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < W * rows * T2;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = i % T2, row = (i / T2) % rows, d = i / T2 / rows;
    const int64_t g = j < LC ? d * LC + j : (2 * W - 1 - d) * LC + (j - LC);
    send[i] = __float2bfloat16_rn(y[row * N + g]);
  }
}

// out[b][j][c] = bf16(x1[b][c][j] y[b][c][j]), y from channel c's owner s = c / CB (chunk s of
// the second all-to-all, at B T2 s CB, rows [b][c - s CB]). 32 x 32 tiles through shared memory:
// read along j, written along c. Block (32, 8), grid (T2 / 32, C / 32, B) rounded up.
__global__ void gate_transpose_kernel(const bf16* __restrict__ x1, const bf16* __restrict__ yr, bf16* __restrict__ out,
                                      int64_t B, int64_t C, int64_t T2, int64_t CB) {
  __shared__ float tile[32][33];
  const int64_t b = blockIdx.z, j0 = int64_t(blockIdx.x) * 32, c0 = int64_t(blockIdx.y) * 32;
  for (int k = threadIdx.y; k < 32; k += blockDim.y) {
    const int64_t c = c0 + k, j = j0 + threadIdx.x;
    if (c < C && j < T2) {
      const int64_t first = c / CB * CB, n = min(CB, C - first);
      tile[k][threadIdx.x] = __bfloat162float(x1[(b * C + c) * T2 + j]) *
                             __bfloat162float(yr[B * T2 * first + (b * n + c - first) * T2 + j]);
    }
  }
  __syncthreads();
  for (int k = threadIdx.y; k < 32; k += blockDim.y) {
    const int64_t j = j0 + k, c = c0 + threadIdx.x;
    if (c < C && j < T2) out[(b * T2 + j) * C + c] = __float2bfloat16_rn(tile[threadIdx.x][k]);
  }
}

// The oracle's FFT magnitude per (batch, channel) row: unit * ||z_row|| sqrt(||h_c||^2 + bias_c^2) / sqrt(L),
// z over the L positions, h over its first keff taps. One block of kThreads per row.
__global__ void fft_magnitude_kernel(const float* zg, const float* hg, const double* bg, int64_t C, int64_t L,
                                     int64_t K, int64_t keff, double unit, double* out) {
  __shared__ double part_z[kThreads], part_h[kThreads];
  const int64_t row = blockIdx.x, c = row % C;
  double sz = 0, sh = 0;
  for (int64_t t = threadIdx.x; t < L; t += blockDim.x) sz += double(zg[row * L + t]) * zg[row * L + t];
  for (int64_t s = threadIdx.x; s < keff; s += blockDim.x) sh += double(hg[c * K + s]) * hg[c * K + s];
  part_z[threadIdx.x] = sz;
  part_h[threadIdx.x] = sh;
  __syncthreads();
  for (int w = blockDim.x / 2; w; w /= 2) {
    if (threadIdx.x < w) part_z[threadIdx.x] += part_z[threadIdx.x + w], part_h[threadIdx.x] += part_h[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[row] = unit * sqrt(part_z[0] * (part_h[0] + bg[c] * bg[c]) / double(L));
}

struct HyenaForwardCp : mgk::Reference {
  using Reference::Reference;
  const int64_t B = dim("B"), C = dim("C"), LC = dim("LC"), K = dim("K"), CB = dim("CB"), L = dim("L");
  const int64_t T2 = 2 * LC;                                        // positions a rank holds
  const int64_t c0 = std::min<int64_t>(rank() * CB, C);             // this rank's channels [c0, c0 + nc)
  const int64_t nc = std::min<int64_t>(CB, C - c0);                 // 0 on ranks past the last channel
  const int64_t rows = B * nc;                                      // (batch, channel) rows convolved here
  const int64_t keff = std::min<int64_t>(K, L);                     // taps that can reach a position < L
  const int64_t N = fft_length(L + keff - 1), nf = N / 2 + 1;       // FFT length, its half-spectrum
  mgk::DeviceBuffer<bf16> z_send, z_recv, y_send, y_recv;           // the two all-to-alls' buffers
  mgk::DeviceBuffer<float> zin, hin;                                // [rows][N], [nc][N]; zin gets y back
  mgk::DeviceBuffer<cufftComplex> zf, hf;                           // [rows][nf], [nc][nf]
  fft::RealPlan z_forward, h_forward, z_inverse;

  int setup() {
    if (L != 2 * world() * LC || CB != (C + world() - 1) / world())
      return mgk::set_error(ctx, "dims L = %lld, CB = %lld are not 2 W LC, ceil(C / W) (LC %lld, C %lld)",
                            (long long)L, (long long)CB, (long long)LC, (long long)C);
    MGK_CUDA_TRY(ctx, z_send.allocate(B * C * T2));
    MGK_CUDA_TRY(ctx, y_recv.allocate(B * C * T2));
    MGK_CUDA_TRY(ctx, z_recv.allocate(std::max<int64_t>(1, rows * L)));
    MGK_CUDA_TRY(ctx, y_send.allocate(std::max<int64_t>(1, rows * L)));
    // Zeros: without a communicator (bench/compute times the compute part alone) the received
    // buffers are never written.
    MGK_CUDA_TRY(ctx, cudaMemset(z_recv, 0, size_t(std::max<int64_t>(1, rows * L)) * sizeof(bf16)));
    MGK_CUDA_TRY(ctx, cudaMemset(y_recv, 0, size_t(B * C * T2) * sizeof(bf16)));
    if (nc == 0) return 0;  // no channels here: this rank only sends and receives
    MGK_CUDA_TRY(ctx, zin.allocate(rows * N));
    MGK_CUDA_TRY(ctx, hin.allocate(nc * N));
    MGK_CUDA_TRY(ctx, zf.allocate(rows * nf));
    MGK_CUDA_TRY(ctx, hf.allocate(nc * nf));
    FFT_CUFFT_TRY(ctx, z_forward.make(N, rows, CUFFT_R2C));
    FFT_CUFFT_TRY(ctx, h_forward.make(N, nc, CUFFT_R2C));
    FFT_CUFFT_TRY(ctx, z_inverse.make(N, rows, CUFFT_C2R));
    return 0;
  }

  int grid(int64_t work) const {
    return int(std::max<int64_t>(1, std::min<int64_t>((work + kThreads - 1) / kThreads, int64_t(ctx->num_sms) * 16)));
  }

  // Channels [first(d), first(d) + count(d)) are rank d's.
  int64_t first(int d) const { return std::min<int64_t>(d * CB, C); }
  int64_t count(int d) const { return std::min<int64_t>(CB, C - first(d)); }

  // One all-to-all: to rank d send_n(d) elements at send + send_at(d), from rank s recv_n(s) at
  // recv + recv_at(s); the own chunk by a device copy, empty chunks skipped.
  template <class SendAt, class SendN, class RecvAt, class RecvN>
  int all_to_all(const bf16* send, SendAt send_at, SendN send_n, bf16* recv, RecvAt recv_at, RecvN recv_n,
                 cudaStream_t st) {
    const int r = rank();
    if (send_n(r) > 0)
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(recv + recv_at(r), send + send_at(r), size_t(send_n(r)) * sizeof(bf16),
                                        cudaMemcpyDeviceToDevice, st));
    if (!comm()) return 0;  // bench/compute: the local work alone
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    for (int p = 0; p < world(); ++p) {
      if (p == r) continue;
      if (send_n(p) > 0) MGK_NCCL_TRY(ctx, ncclSend(send + send_at(p), size_t(send_n(p)), ncclBfloat16, p, comm(), st));
      if (recv_n(p) > 0) MGK_NCCL_TRY(ctx, ncclRecv(recv + recv_at(p), size_t(recv_n(p)), ncclBfloat16, p, comm(), st));
    }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const auto [x1, x2, v, h, bias] = mgk::tensor_data<const bf16, const bf16, const bf16, const bf16, const bf16>(in);
    auto* y = static_cast<bf16*>(out[0].data);
    const int W = world();
    gate_pack_kernel<<<grid(B * C * T2), kThreads, 0, st>>>(x2, v, z_send, B, C, T2, CB);
    MGK_LAUNCH_CHECK(ctx);
    // Sequence-sharded to channel-sharded: rank d's channels of this rank's positions.
    const int64_t chunk = rows * T2;  // what this rank receives from each rank, and sends back
    if (int rc = all_to_all(
            z_send, [&](int d) { return B * T2 * first(d); }, [&](int d) { return B * T2 * count(d); }, z_recv,
            [&](int s) { return s * chunk; }, [&](int) { return chunk; }, st))
      return rc;
    if (nc > 0) {
      unzigzag_kernel<<<grid(rows * N), kThreads, 0, st>>>(z_recv, zin, rows, LC, W, N);
      MGK_LAUNCH_CHECK(ctx);
      filter_kernel<<<grid(nc * N), kThreads, 0, st>>>(h, bias, hin, nc, c0, K, keff, N);
      MGK_LAUNCH_CHECK(ctx);
      FFT_CUFFT_TRY(ctx, z_forward.forward(zin, zf, st));
      FFT_CUFFT_TRY(ctx, h_forward.forward(hin, hf, st));
      spectra_product_kernel<<<grid(rows * nf), kThreads, 0, st>>>(zf, hf, rows, nc, nf, float(1.0 / double(N)));
      MGK_LAUNCH_CHECK(ctx);
      FFT_CUFFT_TRY(ctx, z_inverse.inverse(zf, zin, st));  // y, over zin (z is no longer needed)
      rezigzag_pack_kernel<<<grid(W * rows * T2), kThreads, 0, st>>>(zin, y_send, rows, LC, W, N);
      MGK_LAUNCH_CHECK(ctx);
    }
    // Channel-sharded back to sequence-sharded: every owner's channels at this rank's positions.
    if (int rc = all_to_all(
            y_send, [&](int d) { return d * chunk; }, [&](int) { return chunk; }, y_recv,
            [&](int s) { return B * T2 * first(s); }, [&](int s) { return B * T2 * count(s); }, st))
      return rc;
    const dim3 tiles(unsigned((T2 + 31) / 32), unsigned((C + 31) / 32), unsigned(B));
    gate_transpose_kernel<<<tiles, dim3(32, 8), 0, st>>>(x1, y_recv, y, B, C, T2, CB);
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  // out exactly, by direct sums in fp64 (no FFT): z at every global position regenerated from
  // the rank that holds it (global chunk q on rank q < W ? q : 2W - 1 - q, column (q < W ? 0 :
  // LC) + t mod LC) as x2 v, exact in fp32 (two 8-bit significands); channel c's filter and bias
  // from rank c / CB's copies. For output (b, j, c) at global position g:
  //   y = sum over s <= min(g, K - 1) of h_c[s] z[g - s] + bias_c z[g],   out = x1[b, c, j] y.
  // S = |out| + |x1| (|y| + 4 sqrt(sum of (h z)^2 + (bias z)^2)
  //                   + fp32_accumulation(taps + 1) (sum of |h z| + |bias z|) + F_bc),
  // F_bc = 2^-16 16 log2(2L) ||z_bc|| sqrt(||h_c||^2 + bias_c^2) / sqrt(L), factor 2 (the
  // statement derives it): |out| for the product's rounding to bf16; |x1| |y| for y's cast to
  // bf16; the walk term for z rounded to bf16 before the convolution (ParallelKernelBench's
  // bf16 product; independent errors of at most u |z| each, summed through the filter:
  // kRoundingWalk times their root-sum-square, see mgk/oracle_gemm.cuh); fp32_accumulation for
  // a direct fp32 sum of the taps in any order; F for an fp32 FFT's error, which every output
  // of a row shares whatever its own value (Cooley-Tukey: c u32 log2 N ||z|| ||h|| over the N
  // outputs, N >= L; 2^-16 = u32 / u).
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int64_t B = this->B, C = this->C, LC = this->LC, K = this->K, CB = this->CB, L = this->L, T2 = this->T2;
    const int64_t keff = this->keff;  // by value into the device lambdas
    const int r = rank(), W = world();
    const mgk_input_gen g1 = a->gens[0], g2 = a->gens[1], gv = a->gens[2], gh = a->gens[3], gb = a->gens[4];
    const auto [expected, scale] = mgk::oracle_output(a, 0);
    mgk::oracle::Scratch scratch(st);
    float* zg = scratch.get<float>(B * C * L);  // z[b][c][t], every position, natural order
    float* hg = scratch.get<float>(C * K);      // h_c, from its owner's copy
    double* bg = scratch.get<double>(C);        // bias_c, from its owner's copy
    double* fmag = scratch.get<double>(B * C);  // F_bc
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          B * C * L,
                          [=] __device__(int64_t i) {
                            const int64_t t = i % L, row = i / L;
                            const int64_t q = t / LC, s = q < W ? q : 2 * W - 1 - q;
                            const int64_t at = row * T2 + (q < W ? 0 : LC) + t % LC;
                            zg[i] = float(mgk::gen_value(g2, int(s), at) * mgk::gen_value(gv, int(s), at));
                          },
                          st));
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          C * K, [=] __device__(int64_t i) { hg[i] = float(mgk::gen_value(gh, int(i / K / CB), i)); },
                          st));
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          C, [=] __device__(int64_t c) { bg[c] = mgk::gen_value(gb, int(c / CB), c); }, st));
    fft_magnitude_kernel<<<unsigned(B * C), kThreads, 0, st>>>(zg, hg, bg, C, L, K, keff,
                                                                 0x1p-16 * 16.0 * std::log2(2.0 * double(L)), fmag);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          B * C * T2,  // x1's order on this rank: (b, c, j), j fastest (z read along j)
                          [=] __device__(int64_t i) {
                            const int64_t j = i % T2, row = i / T2, c = row % C, b = row / C;
                            const int64_t g = j < LC ? r * LC + j : (2 * W - 1 - r) * LC + (j - LC);
                            const float* zr = zg + row * L;
                            const float* hr = hg + c * K;
                            const int64_t taps = (g < K - 1 ? g : K - 1) + 1;
                            double conv = 0;
                            float mag = 0, sq = 0;
                            for (int64_t s = 0; s < taps; ++s) {
                              const float p = hr[s] * zr[g - s];  // exact: 8 + 16 significant bits
                              conv += double(p);
                              mag += fabsf(p);
                              sq = fmaf(p, p, sq);
                            }
                            const double bz = bg[c] * double(zr[g]);
                            const double yv = conv + bz;
                            const double x = mgk::gen_value(g1, r, i);
                            const double o = x * yv;
                            const double walk = mgk::oracle::kRoundingWalk * sqrt(double(sq) + bz * bz);
                            const double acc = mgk::oracle::fp32_accumulation(taps + 1) * (double(mag) + fabs(bz));
                            const int64_t at = (b * T2 + j) * C + c;
                            expected[at] = o;
                            scale[at] = float(fabs(o) + fabs(x) * (fabs(yv) + walk + acc + fmag[row]));
                          },
                          st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(HyenaForwardCp)
