// The generator of one input as the harness fills it and the references' oracles regenerate
// it (mgk/gen.cuh): its plan's distribution and special rows under a seed. One translation,
// so a tool that fills inputs (bench/compute) draws what an evaluation draws.
#pragma once
#include <cstdint>

#include "mgk/abi.h"
#include "wire/protocol.h"

namespace mgk::sandbox {

mgk_input_gen input_gen(const wire::InputInit& init, mgk_dtype dtype, uint64_t seed);

}  // namespace mgk::sandbox
