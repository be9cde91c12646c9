// Aggregator: who sends what to whom, for every block of a kernel's grid. The one-shot
// (one_shot: every rank pushes to every peer's landing slot once; protocol a policy), the
// two-shot reduction (two_shot), the direct push of an exchange (direct_push) and the
// rooted copy (rooted_copy); each is generic over its layout (which collective).
#pragma once
#include "direct_push.cuh"
#include "one_shot.cuh"
#include "rooted_copy.cuh"
#include "two_shot.cuh"
