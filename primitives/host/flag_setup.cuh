// Host side, mgk_setup: allocate a solution's flag buffer and agree on its grid size.
#pragma once
#include "views.cuh"
#include "../sync/epoch.cuh"

namespace mgk::prim {

// Allocates (collectively, zero-filled) room for `regions` x `max_pairs` block flags and
// agrees with every rank on the number of blocks: the minimum over ranks of `want_blocks`,
// clamped to [1, max_pairs], in *blocks. Every rank must then launch exactly *blocks blocks
// for kernels whose block b pairs with block b of the other ranks. Setup only.
inline int setup_block_flags(mgk_ctx* ctx, int regions, int max_pairs, int want_blocks, mgk_sym_buffer* buf,
                             block_flags* flags, int* blocks) {
  constexpr size_t kAgreeBytes = 16;  // scratch of agree_min, in front of the flags
  const size_t bytes = kAgreeBytes + block_flags::bytes(regions, max_pairs, ctx->world_size);
  if (sym_alloc(ctx, bytes, "block flags", buf) != 0) return 1;
  int64_t agreed = 0;
  if (agree_min(ctx, *buf, want_blocks, &agreed) != 0) return 1;
  *blocks = int(agreed < 1 ? 1 : agreed > max_pairs ? max_pairs : agreed);
  flags->base = view_of<uint64_t>(ctx, *buf).at(kAgreeBytes / sizeof(uint64_t));
  flags->pairs = max_pairs;
  return 0;
}

// Setup of a solution whose kernels pair block b with block b of every other rank: the grid
// in *blocks (one block per SM at most, no more than each of `kernels` keeps resident with
// `threads` threads, at most `cap` when cap > 0, the minimum over ranks) and its flags,
// `regions` x up to 1024 pairs, in *flags. Collective, setup only.
template <class... Kernels>
inline int setup_paired_grid(mgk_ctx* ctx, int regions, int threads, int cap, block_flags* flags, int* blocks,
                             Kernels... kernels) {
  constexpr int kMaxPairs = 1024;
  int fit = ctx->num_sms, f = 0;
  const bool fits = ((resident_blocks(ctx, kernels, threads, 0, &f) == 0 && ((fit = f < fit ? f : fit), true)) && ...);
  if (!fits) return 1;
  mgk_sym_buffer buf{};
  return setup_block_flags(ctx, regions, kMaxPairs, cap > 0 && cap < fit ? cap : fit, &buf, flags, blocks);
}

}  // namespace mgk::prim
