// Reference of moe/moe_ep_balanced: the shared expert-parallel path, ../moe_reference.cuh.
#include "../moe_reference.cuh"
