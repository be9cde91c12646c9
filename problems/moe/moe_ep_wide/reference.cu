// Reference of moe/moe_ep_wide: the shared expert-parallel path, ../moe_reference.cuh.
#include "../moe_reference.cuh"
