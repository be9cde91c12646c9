// Reference of moe/fused_moe_fwd_lora: the shared expert-parallel path (../moe_reference.cuh)
// with the LoRA MLP (moe::LoraMlp, four cuBLASLt GEMMs keeping PKB's bf16 rounding points)
// and the LoRA oracle.
#define MOE_LORA 1
#include "../moe_reference.cuh"
