// Reference, as ParallelKernelBench's: the last 6 columns of each of this rank's two zigzag
// chunks are packed (A: the first chunk's, B: the second's), one NCCL group sends A to rank
// r + 1 and B to rank r - 1 and receives the previous rank's A and the next rank's B, and
// one kernel runs the causal depthwise convolution over both chunks, each led by its halo:
// the first chunk (global chunk r) by the previous rank's A, zeros on rank 0; the second
// (global chunk 2W - 1 - r) by the next rank's B, and on the last rank by its own A (global
// chunk W - 1, its own first chunk, precedes chunk W).
//
// Why a custom kernel and not cuDNN's grouped convolution (nothing measured; the argument):
// the convolution is depthwise (groups = C, one channel a group) with 7 taps, so it does 7
// multiply-adds per output: 3.5 flops per byte of bf16 read and written, two orders of
// magnitude below what makes an H100 compute-bound. The fastest any implementation can be is
// one pass that reads x once and writes y once at HBM bandwidth, and this kernel is that pass:
// 16-byte loads and stores, each x element read once from HBM (the 6 columns a thread shares
// with its left neighbour come from L1), the halos from a 12-byte row of a small buffer.
// cuDNN cannot do better and does worse: its convolution needs each chunk's halo in front of
// it in memory, i.e. PyTorch's torch.cat of halos and chunks, one more read and write of all
// of x before the convolution reads it again (twice the traffic); its implicit-GEMM kernels
// see C groups of a 1-output-channel GEMM, which they tile poorly; and a causal (left-only)
// padding it lacks must come from that copy too. A library call would be the slower choice.
#include "mgk/reference_kit.h"

namespace {

using bf16 = __nv_bfloat16;
constexpr int kTaps = 7;             // the filter's width (ParallelKernelBench's kernel_size)
constexpr int kHalo = kTaps - 1;     // the columns of the chunk before that a chunk needs
constexpr int kThreads = 256;

// 8 bf16 of a 16-byte word as floats.
__device__ inline void unpack8(uint4 raw, float (&v)[8]) {
  const auto* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
  for (int k = 0; k < 4; ++k) {
    const float2 f = __bfloat1622float2(h[k]);
    v[2 * k] = f.x, v[2 * k + 1] = f.y;
  }
}

// a[row][k] = x[row][L - 6 + k] (the first chunk's tail), b[row][k] = x[row][2L - 6 + k] (the
// second's), k < 6: contiguous messages, as ParallelKernelBench's .contiguous() makes them.
__global__ void pack_tails_kernel(const bf16* x, int64_t rows, int64_t L, bf16* a, bf16* b) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * kHalo;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / kHalo, k = i % kHalo;
    a[i] = x[row * 2 * L + L - kHalo + k];
    b[i] = x[row * 2 * L + 2 * L - kHalo + k];
  }
}

// y[row][h L + p] = sum over k < 7 of w[c][k] v_h(p - 6 + k), c = row % C, where v_h(q) is
// x[row][h L + q] for q >= 0 and halo_h[row][6 + q] for q < 0 (0 where halo_h is null). The
// taps are added in fp32 in the order k = 0..6 and the sum rounded once to bf16.
// kVec (L % 8 == 0, x and y 16-byte aligned): a thread makes 8 consecutive outputs of one
// chunk from the 16-byte word at p0 and the 6 columns before it (the word before, or the halo
// when p0 = 0); otherwise a thread per output.
template <bool kVec>
__global__ void causal_conv_kernel(const bf16* __restrict__ x, const bf16* __restrict__ w, const bf16* halo0,
                                   const bf16* halo1, bf16* __restrict__ y, int64_t rows, int64_t C, int64_t L) {
  const int64_t per_chunk = kVec ? L / 8 : L, per_row = 2 * per_chunk;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * per_row;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / per_row, u = i % per_row;
    const int h = u >= per_chunk;
    const int64_t at = row * 2 * L + h * L;  // the chunk's first column in x and y
    const bf16* halo = h ? halo1 : halo0;
    const bf16* wrow = w + (row % C) * kTaps;
    float wt[kTaps];
    for (int k = 0; k < kTaps; ++k) wt[k] = __bfloat162float(wrow[k]);
    if (kVec) {
      const int64_t p0 = 8 * (u - h * per_chunk);
      float v[kHalo + 8], cur[8];
      unpack8(*reinterpret_cast<const uint4*>(x + at + p0), cur);
      for (int j = 0; j < 8; ++j) v[kHalo + j] = cur[j];
      if (p0 >= 8) {
        float prev[8];
        unpack8(*reinterpret_cast<const uint4*>(x + at + p0 - 8), prev);
        for (int k = 0; k < kHalo; ++k) v[k] = prev[8 - kHalo + k];
      } else {
        for (int k = 0; k < kHalo; ++k) v[k] = halo ? __bfloat162float(halo[row * kHalo + k]) : 0.0f;
      }
      uint4 packed;
      auto* o = reinterpret_cast<bf16*>(&packed);
      for (int j = 0; j < 8; ++j) {
        float acc = 0;
        for (int k = 0; k < kTaps; ++k) acc = fmaf(wt[k], v[j + k], acc);
        o[j] = __float2bfloat16_rn(acc);
      }
      *reinterpret_cast<uint4*>(y + at + p0) = packed;
    } else {
      const int64_t p = u - h * per_chunk;
      float acc = 0;
      for (int k = 0; k < kTaps; ++k) {
        const int64_t q = p - kHalo + k;
        const float v = q >= 0 ? __bfloat162float(x[at + q])
                               : (halo ? __bfloat162float(halo[row * kHalo + kHalo + q]) : 0.0f);
        acc = fmaf(wt[k], v, acc);
      }
      y[at + p] = __float2bfloat16_rn(acc);
    }
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

struct HyenaConv1dBoundaryExchange : mgk::Reference {
  using Reference::Reference;
  const int64_t B = dim("B"), C = dim("C"), L = dim("L");
  const int64_t rows = B * C, halo_elems = B * C * kHalo;
  // 4 halo_elems: this rank's A (sent to r + 1) and B (sent to r - 1), the previous rank's A
  // and the next rank's B (received).
  mgk::DeviceBuffer<bf16> halos;

  int setup() {
    MGK_CUDA_TRY(ctx, halos.allocate(4 * halo_elems));
    // Zeros: without a communicator (bench/compute times the compute part alone) the received
    // halos are never written.
    MGK_CUDA_TRY(ctx, cudaMemset(halos, 0, size_t(4 * halo_elems) * sizeof(bf16)));
    return 0;
  }

  int grid(int64_t work) const {
    return int(std::max<int64_t>(1, std::min<int64_t>((work + kThreads - 1) / kThreads, int64_t(ctx->num_sms) * 16)));
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int r = rank(), W = world();
    const auto* x = static_cast<const bf16*>(in[0].data);
    const auto* w = static_cast<const bf16*>(in[1].data);
    auto* y = static_cast<bf16*>(out[0].data);
    bf16* own_a = halos;
    bf16* own_b = halos + halo_elems;
    bf16* prev_a = halos + 2 * halo_elems;
    bf16* next_b = halos + 3 * halo_elems;
    pack_tails_kernel<<<grid(halo_elems), kThreads, 0, st>>>(x, rows, L, own_a, own_b);
    MGK_LAUNCH_CHECK(ctx);
    if (const ncclComm_t group = comm()) {
      MGK_NCCL_TRY(ctx, ncclGroupStart());
      if (r > 0) {
        MGK_NCCL_TRY(ctx, ncclRecv(prev_a, size_t(halo_elems), ncclBfloat16, r - 1, group, st));
        MGK_NCCL_TRY(ctx, ncclSend(own_b, size_t(halo_elems), ncclBfloat16, r - 1, group, st));
      }
      if (r < W - 1) {
        MGK_NCCL_TRY(ctx, ncclSend(own_a, size_t(halo_elems), ncclBfloat16, r + 1, group, st));
        MGK_NCCL_TRY(ctx, ncclRecv(next_b, size_t(halo_elems), ncclBfloat16, r + 1, group, st));
      }
      MGK_NCCL_TRY(ctx, ncclGroupEnd());
    }
    const bf16* halo0 = r == 0 ? nullptr : prev_a;    // the sequence starts on rank 0: zeros
    const bf16* halo1 = r == W - 1 ? own_a : next_b;  // chunk W - 1 (its own first) precedes chunk W
    if (L % 8 == 0 && aligned16(x) && aligned16(y))
      causal_conv_kernel<true><<<grid(rows * L / 4), kThreads, 0, st>>>(x, w, halo0, halo1, y, rows, C, L);
    else
      causal_conv_kernel<false><<<grid(rows * 2 * L), kThreads, 0, st>>>(x, w, halo0, halo1, y, rows, C, L);
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  // y exactly, from the global sequence rather than from halos: output column j of rank r is
  // global position g = c_h L + p (c_0 = r, c_1 = 2W - 1 - r, p = j mod L), and its tap k
  // reads global position g - 6 + k (nothing before 0), which lies in chunk q on rank
  // (q < W ? q : 2W - 1 - q), at column (q < W ? 0 : L) + its offset in the chunk, regenerated
  // there. S = sum over the taps of |w x|.
  // The bound, 2 u S: the reference's products of two bf16 are exact in fp32, its 7-term fp32
  // sum errs by at most 6 u32 S = 6 * 2^-16 u S, and its one rounding to bf16 by at most
  // u |y| <= u S. So it stays within (1 + 2^-13) u S, half the bound up to that 2^-13; any
  // order of an fp32 (or wider) sum rounded once does the same.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int64_t C = this->C, L = this->L;  // by value into the device lambda
    const int r = rank(), W = world();
    const mgk_input_gen gx = a->gens[0], gw = a->gens[1];
    auto* expected = static_cast<double*>(a->expected[0]);
    float* scale = a->scale[0];
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          rows * 2 * L,
                          [=] __device__(int64_t i) {
                            const int64_t row = i / (2 * L), j = i % (2 * L), c = row % C;
                            const int64_t chunk = j < L ? r : 2 * W - 1 - r;
                            const int64_t g = chunk * L + j % L;
                            double sum = 0, mag = 0;
                            for (int k = 0; k < kTaps; ++k) {
                              const int64_t pos = g - kHalo + k;
                              if (pos < 0) continue;
                              const int64_t q = pos / L;
                              const int owner = int(q < W ? q : 2 * W - 1 - q);
                              const int64_t col = (q < W ? 0 : L) + pos % L;
                              const double t = mgk::gen_value(gw, r, c * kTaps + k) *
                                               mgk::gen_value(gx, owner, row * 2 * L + col);
                              sum += t;
                              mag += fabs(t);
                            }
                            expected[i] = sum;
                            scale[i] = float(mag);
                          },
                          st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(HyenaConv1dBoundaryExchange)
