// Aggregator: the protocols of a push (policy.cuh: flagged, lamport), the Lamport slots and
// their block-level one-shots, and the credits that pace one-way flows.
#pragma once
#include "credits.cuh"
#include "lamport_block.cuh"
#include "lamport_slots.cuh"
#include "policy.cuh"
