// Aggregator: arithmetic on 16-byte vectors (vec_math) and block-cooperative sums over local
// and peer sources (block_reduce), accumulated in fp32.
#pragma once
#include "block_reduce.cuh"
#include "vec_math.cuh"
