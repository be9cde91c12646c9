// Aggregator: overlapping communication with computation (inter-SM role split, intra-SM
// warp specialisation, chunk-by-chunk pipelines across GPUs).
#pragma once
#include "chunk_pipeline.cuh"
#include "role_split.cuh"
#include "warp_roles.cuh"
