// Reference: ZeRO-2 as ParallelKernelBench writes it (dp_zero.cuh): broadcast of rank 0's
// flat parameters, the MLP's forward and backward on cuBLASLt, ncclReduceScatter of the flat
// gradients (zero-padded to W shards), Adam on this rank's shard, ncclAllGather of the
// updated shards.
#include "../dp_zero.cuh"

MGK_REFERENCE(dp::zero::Zero</*kReduceScatter=*/true>)
