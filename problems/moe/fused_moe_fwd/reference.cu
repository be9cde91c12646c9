// Reference of moe/fused_moe_fwd (E = 8 experts, EL = E / W a rank): the shared
// expert-parallel path, ../moe_reference.cuh.
#include "../moe_reference.cuh"
