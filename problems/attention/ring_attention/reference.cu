// Reference: ParallelKernelBench's ring attention over every rank (rank r holds positions
// [r S, (r+1) S) of the sequence): ring::Ring of ../ring_common.cuh, NCCL send/recv of K and V
// along the ring on a second stream, cuDNN fused attention per block returning its
// log-sum-exp, an fp32 merge kernel.
#include "../ring_common.cuh"

namespace {

struct RingAttention : mgk::Reference {
  using Reference::Reference;
  const int64_t B = dim("B"), S = dim("S"), T = dim("T"), H = dim("H"), D = dim("D");
  ring::Ring ring;

  int setup() { return ring.setup(ctx, B, S, H, D, world()); }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    return ring.run(ctx, comm(), rank(), world(), in[0].data, in[1].data, in[2].data,
                    static_cast<__nv_bfloat16*>(out[0].data), st);
  }

  // The exact causal attention of this rank's queries over the whole sequence's K and V
  // (ring::attention_oracle), from the regenerated inputs.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    namespace o = mgk::oracle;
    const int64_t B = this->B, S = this->S, T = this->T, H = this->H, D = this->D;  // by value into the device lambda
    if (D > 128) return mgk::set_error(ctx, "oracle: D = %lld > 128", (long long)D);
    o::Scratch scratch(st);
    double *q = scratch.get<double>(B * S * H * D), *k = scratch.get<double>(B * T * H * D),
           *v = scratch.get<double>(B * T * H * D);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    const mgk_input_gen gq = a->gens[0], gk = a->gens[1], gv = a->gens[2];
    const int rank = this->rank();
    // K and V of the whole sequence: position j is rank j / S's position j % S.
    MGK_CUDA_TRY(ctx, o::for_each(
                          B * T * H * D,
                          [=] __device__(int64_t e) {
                            const int64_t c = e % D, h = (e / D) % H, j = (e / (D * H)) % T, b = e / (D * H * T);
                            const int64_t local = ((b * S + j % S) * H + h) * D + c;
                            k[e] = mgk::gen_value(gk, int(j / S), local);
                            v[e] = mgk::gen_value(gv, int(j / S), local);
                            if (j / S == rank) q[local] = mgk::gen_value(gq, rank, local);
                          },
                          st));
    MGK_CUDA_TRY(ctx, ring::launch_attention_oracle(q, k, v, nullptr, nullptr, nullptr,
                                                    static_cast<double*>(a->expected[0]), a->scale[0], rank, B, S, T,
                                                    H, D, st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(RingAttention)
