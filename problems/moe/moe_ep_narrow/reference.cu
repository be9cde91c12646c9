// Reference of moe/moe_ep_narrow: the shared expert-parallel path, ../moe_reference.cuh.
#include "../moe_reference.cuh"
