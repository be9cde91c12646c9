// Reference: ZeRO-1 as ParallelKernelBench writes it (dp_zero.cuh): broadcast of rank 0's
// flat parameters, the MLP's forward and backward on cuBLASLt, ncclAllReduce of the flat
// gradients, Adam on this rank's shard, ncclAllGather of the updated shards.
#include "../dp_zero.cuh"

MGK_REFERENCE(dp::zero::Zero</*kReduceScatter=*/false>)
