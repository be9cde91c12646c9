// Aggregator: how bytes move between GPUs (the transfer mechanisms). Register-level 16-byte
// loads and stores (vec_io, block_copy), TMA bulk copies (tma_bulk, tma_relay), the copy
// engine (host-issued, copy_engine), and block_mover<Mech>, which makes the SM-driven
// mechanism a compile-time choice.
#pragma once
#include "block_copy.cuh"
#include "block_mover.cuh"
#include "copy_engine.cuh"
#include "tma_bulk.cuh"
#include "tma_relay.cuh"
#include "vec_io.cuh"
