// Register-level transfers: each thread moves 16 bytes per instruction (uint4), to or from
// local memory or a PEER's memory (a sym_view::peer pointer). Over NVLink, a remote store
// is fire-and-forget (the SM does not wait for it), while a remote load costs a round trip
// (~1-2 us), so loads need many in flight per thread (unroll) to reach bandwidth.
//
// These are weak (plain) accesses: use the sync/ primitives to order them across GPUs.
// They are volatile asm with a memory clobber so the compiler never moves them across a
// flag wait or signal.
#pragma once
#include "../common/base.cuh"

namespace mgk::prim {

// The register type that carries `Bytes` bytes (1-byte values travel in a 16-bit register).
template <int Bytes> struct raw_of;
template <> struct raw_of<1> { using type = unsigned short; };
template <> struct raw_of<2> { using type = unsigned short; };
template <> struct raw_of<4> { using type = uint32_t; };
template <> struct raw_of<8> { using type = uint2; };
template <> struct raw_of<16> { using type = uint4; };
template <int Bytes> using raw_t = typename raw_of<Bytes>::type;

// Load / store `Bytes` bytes at p (p aligned to Bytes; local or peer global memory).
template <int Bytes> MGK_DEV raw_t<Bytes> load(const void* p);
template <int Bytes> MGK_DEV void store(void* p, raw_t<Bytes> v);

template <> MGK_DEV raw_t<1> load<1>(const void* p) {
  unsigned short v;
  asm volatile("ld.global.u8 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
  return v;
}
template <> MGK_DEV raw_t<2> load<2>(const void* p) {
  unsigned short v;
  asm volatile("ld.global.u16 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
  return v;
}
template <> MGK_DEV raw_t<4> load<4>(const void* p) {
  uint32_t v;
  asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
template <> MGK_DEV raw_t<8> load<8>(const void* p) {
  uint2 v;
  asm volatile("ld.global.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p) : "memory");
  return v;
}
template <> MGK_DEV raw_t<16> load<16>(const void* p) {
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

template <> MGK_DEV void store<1>(void* p, raw_t<1> v) {
  asm volatile("st.global.u8 [%0], %1;" ::"l"(p), "h"(v) : "memory");
}
template <> MGK_DEV void store<2>(void* p, raw_t<2> v) {
  asm volatile("st.global.u16 [%0], %1;" ::"l"(p), "h"(v) : "memory");
}
template <> MGK_DEV void store<4>(void* p, raw_t<4> v) {
  asm volatile("st.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
template <> MGK_DEV void store<8>(void* p, raw_t<8> v) {
  asm volatile("st.global.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(v.x), "r"(v.y) : "memory");
}
template <> MGK_DEV void store<16>(void* p, raw_t<16> v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// The 16-byte forms under their short names.
MGK_DEV uint4 ld16(const void* p) { return load<16>(p); }
MGK_DEV void st16(void* p, uint4 v) { store<16>(p, v); }

// A 16-byte load that does not allocate in L1: for data read exactly once (streaming a
// peer's buffer), so it does not evict what the block reuses.
MGK_DEV uint4 ld16_stream(const void* p) {
  uint4 v;
  asm volatile("ld.global.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

// A 16-byte load that always reads memory (never a stale L1 line): for polling data that
// another GPU is writing (protocol/lamport_slots.cuh).
MGK_DEV uint4 ld16_volatile(const void* p) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

}  // namespace mgk::prim
