// What a hostile candidate needs to reach, at run time, what its imports and its code do not
// show: the functions of libc it may not import, and the GOT of the process that times it.
// Nothing here is imported or contains a system-call instruction, so every static check
// passes; only the candidate process's run-time defenses (its system-call filter, its
// sandbox, the harness's outside clock) can stop what the attacks beside it do.
//
//   elf_base_of(address)      the loaded ELF object holding an address: walk down to its header
//   Loaded / open_loaded      that object's load bias and dynamic tables, read in memory
//   symbol(obj, name)         a defined dynamic symbol by name (GNU or SysV hash)
//   got_slot(obj, name)       the GOT slot the object's own calls of `name` go through
//   libc() / libc_fn<F>(name) libc found from &printf: any libc function by name
//   executable_of(ctx)        the candidate process's executable, found from ctx->sym_alloc
//   hook_got(obj, name, ...)  point a GOT slot at a hook with libc's mprotect (never PROT_EXEC)
//
// x86-64 Linux, glibc's loader. Host code only.
#pragma once
#include <elf.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "../candidates/simple_common.cuh"
#include "mgk/solution.h"

namespace inmem {

constexpr uintptr_t kPage = 4096;

// The attack could not be set up: say so as the candidate's error, so that a test never
// mistakes an attack that did not happen for a defense that held.
inline int not_mounted(mgk_ctx* ctx, const char* why) { return mgk::set_error(ctx, "attack not mounted: %s", why); }

// The start of the loaded x86-64 ELF object that holds `address`. The loader maps an object
// from its first page (the first PT_LOAD, offset 0, holds the ELF and program headers) as
// one reservation, so the pages on the way down from an address in it are mapped, unless
// its segments leave a gap (which the loader makes PROT_NONE): mgk-candidate's and libc's
// leave none. The header's fields are checked too: an ELF image embedded in the object's
// data (a cubin in .nv_fatbin) is not its header.
inline const unsigned char* elf_base_of(const void* address) {
  uintptr_t p = reinterpret_cast<uintptr_t>(address) & ~(kPage - 1);
  for (int pages = 0; pages < (1 << 16) && p >= kPage; ++pages, p -= kPage) {  // 256 MiB at most
    const auto* b = reinterpret_cast<const unsigned char*>(p);
    if (std::memcmp(b, ELFMAG, SELFMAG) != 0) continue;
    const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(b);
    if (b[EI_CLASS] == ELFCLASS64 && eh->e_machine == EM_X86_64 && (eh->e_type == ET_DYN || eh->e_type == ET_EXEC) &&
        eh->e_phentsize == sizeof(Elf64_Phdr) && eh->e_phoff < kPage)
      return b;
  }
  return nullptr;
}

// A loaded object as its dynamic section describes it.
struct Loaded {
  const unsigned char* base = nullptr;
  uintptr_t bias = 0;  // run-time address minus link-time address
  const Elf64_Sym* symtab = nullptr;
  const char* strtab = nullptr;
  const uint32_t* gnu_hash = nullptr;
  const uint32_t* sysv_hash = nullptr;
  const Elf64_Half* versym = nullptr;  // DT_VERSYM, if any: tells an old version (memcpy@GLIBC_2.2.5) apart
  const Elf64_Rela* jmprel = nullptr;  // DT_JMPREL: the PLT's slots (R_X86_64_JUMP_SLOT)
  size_t jmprel_bytes = 0;
  const Elf64_Rela* rela = nullptr;    // DT_RELA: GOT slots of -z now / -fno-plt calls (R_X86_64_GLOB_DAT)
  size_t rela_bytes = 0;
  uintptr_t relro_begin = 0, relro_end = 0;  // the pages the loader made read-only (PT_GNU_RELRO)
  bool ok() const { return symtab && strtab && (gnu_hash || sysv_hash); }
};

inline bool open_loaded(const unsigned char* base, Loaded& out) {
  out = Loaded{};
  if (!base) return false;
  out.base = base;
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(base);
  const auto* ph = reinterpret_cast<const Elf64_Phdr*>(base + eh->e_phoff);
  const Elf64_Phdr* dynamic = nullptr;
  bool first_load = true;
  for (int i = 0; i < eh->e_phnum; ++i) {
    if (ph[i].p_type == PT_LOAD && first_load) {
      out.bias = reinterpret_cast<uintptr_t>(base) - ph[i].p_vaddr;  // the header is where the first PT_LOAD is
      first_load = false;
    }
    if (ph[i].p_type == PT_DYNAMIC) dynamic = &ph[i];
  }
  if (first_load || !dynamic) return false;
  for (int i = 0; i < eh->e_phnum; ++i)
    if (ph[i].p_type == PT_GNU_RELRO) {  // the loader protects whole pages: the end rounds down
      out.relro_begin = (out.bias + ph[i].p_vaddr) & ~(kPage - 1);
      out.relro_end = (out.bias + ph[i].p_vaddr + ph[i].p_memsz) & ~(kPage - 1);
    }
  // glibc's loader rewrites the dynamic section's addresses to run-time ones; other loaders
  // leave link-time ones (below the bias): take either.
  auto at = [&](uint64_t v) { return v >= out.bias ? uintptr_t(v) : uintptr_t(v + out.bias); };
  for (const auto* d = reinterpret_cast<const Elf64_Dyn*>(out.bias + dynamic->p_vaddr); d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB: out.symtab = reinterpret_cast<const Elf64_Sym*>(at(d->d_un.d_ptr)); break;
      case DT_STRTAB: out.strtab = reinterpret_cast<const char*>(at(d->d_un.d_ptr)); break;
      case DT_GNU_HASH: out.gnu_hash = reinterpret_cast<const uint32_t*>(at(d->d_un.d_ptr)); break;
      case DT_HASH: out.sysv_hash = reinterpret_cast<const uint32_t*>(at(d->d_un.d_ptr)); break;
      case DT_VERSYM: out.versym = reinterpret_cast<const Elf64_Half*>(at(d->d_un.d_ptr)); break;
      case DT_JMPREL: out.jmprel = reinterpret_cast<const Elf64_Rela*>(at(d->d_un.d_ptr)); break;
      case DT_PLTRELSZ: out.jmprel_bytes = d->d_un.d_val; break;
      case DT_RELA: out.rela = reinterpret_cast<const Elf64_Rela*>(at(d->d_un.d_ptr)); break;
      case DT_RELASZ: out.rela_bytes = d->d_un.d_val; break;
      default: break;
    }
  }
  return out.ok();
}

inline uint32_t gnu_hash_of(const char* s) {
  uint32_t h = 5381;
  for (; *s; ++s) h = h * 33 + static_cast<unsigned char>(*s);
  return h;
}

inline uint32_t sysv_hash_of(const char* s) {
  uint32_t h = 0;
  for (; *s; ++s) {
    h = (h << 4) + static_cast<unsigned char>(*s);
    const uint32_t g = h & 0xf0000000u;
    if (g) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

// The run-time address of the function or object `name` that `obj` defines (its default
// version: what a program linked today would get); nullptr if it defines none. An IFUNC's
// resolver is called, as glibc's x86-64 loader calls it (no arguments), for the
// implementation.
inline void* symbol(const Loaded& obj, const char* name) {
  const Elf64_Sym* found = nullptr;
  auto matches = [&](uint32_t i) {
    const Elf64_Sym& s = obj.symtab[i];
    if (obj.versym && (obj.versym[i] & 0x8000)) return false;  // hidden: name@OLD
    return s.st_shndx != SHN_UNDEF && s.st_value != 0 && std::strcmp(obj.strtab + s.st_name, name) == 0;
  };
  if (obj.gnu_hash) {
    // [nbuckets, symoffset, bloom words, bloom shift], bloom (64-bit words), buckets, chains.
    const uint32_t* h = obj.gnu_hash;
    const uint32_t nbuckets = h[0], symoffset = h[1], bloom_words = h[2];
    const uint32_t* buckets = h + 4 + 2 * bloom_words;
    const uint32_t* chains = buckets + nbuckets;
    const uint32_t hash = gnu_hash_of(name);
    for (uint32_t i = buckets[hash % nbuckets]; i >= symoffset && !found; ++i) {
      const uint32_t link = chains[i - symoffset];
      if ((link | 1) == (hash | 1) && matches(i)) found = &obj.symtab[i];
      if (link & 1) break;  // the end of this bucket's chain
    }
  } else {
    // [nbucket, nchain], buckets, chains.
    const uint32_t* h = obj.sysv_hash;
    const uint32_t nbucket = h[0];
    const uint32_t* buckets = h + 2;
    const uint32_t* chains = buckets + nbucket;
    for (uint32_t i = buckets[sysv_hash_of(name) % nbucket]; i != STN_UNDEF && !found; i = chains[i])
      if (matches(i)) found = &obj.symtab[i];
  }
  if (!found) return nullptr;
  void* address = reinterpret_cast<void*>(obj.bias + found->st_value);
  if (ELF64_ST_TYPE(found->st_info) == STT_GNU_IFUNC) address = reinterpret_cast<void* (*)()>(address)();
  return address;
}

// The GOT slot through which `obj`'s own code calls `name` (an import): what the loader
// filled in for its R_X86_64_JUMP_SLOT (DT_JMPREL) or R_X86_64_GLOB_DAT (DT_RELA).
inline void** got_slot(const Loaded& obj, const char* name) {
  auto scan = [&](const Elf64_Rela* r, size_t bytes, uint32_t type) -> void** {
    for (size_t i = 0; r && i < bytes / sizeof(Elf64_Rela); ++i) {
      if (ELF64_R_TYPE(r[i].r_info) != type) continue;
      const Elf64_Sym& s = obj.symtab[ELF64_R_SYM(r[i].r_info)];
      if (std::strcmp(obj.strtab + s.st_name, name) == 0) return reinterpret_cast<void**>(obj.bias + r[i].r_offset);
    }
    return nullptr;
  };
  if (void** slot = scan(obj.jmprel, obj.jmprel_bytes, R_X86_64_JUMP_SLOT)) return slot;
  return scan(obj.rela, obj.rela_bytes, R_X86_64_GLOB_DAT);
}

// libc, found from printf (an allowed import: its address, through this library's GOT, is
// libc's own printf). Found once.
inline const Loaded* libc() {
  static Loaded lib;
  static bool tried = false, found = false;
  if (!tried) {
    tried = true;
    found = open_loaded(elf_base_of(reinterpret_cast<const void*>(&printf)), lib);
  }
  return found ? &lib : nullptr;
}

// A libc function by name, as a pointer of type F; nullptr if libc or the name is not found.
template <typename F>
inline F libc_fn(const char* name) {
  const Loaded* lib = libc();
  return lib ? reinterpret_cast<F>(symbol(*lib, name)) : nullptr;
}

// The candidate process's executable (mgk-candidate): ctx->sym_alloc points into it.
inline bool executable_of(mgk_ctx* ctx, Loaded& out) {
  return open_loaded(elf_base_of(reinterpret_cast<const void*>(ctx->sym_alloc)), out);
}

// Points `name`'s GOT slot in `obj` at `hook` and returns what was there (the real function)
// in *real. The slot is read-only under full RELRO: libc's mprotect (found in memory, never
// imported) makes its page writable for the write (PROT_READ|PROT_WRITE: nothing is made
// executable), and a page the loader had made read-only is made so again. nullptr when
// done, else why not.
inline const char* hook_got(const Loaded& obj, const char* name, void* hook, void** real) {
  using mprotect_fn = int (*)(void*, size_t, int);
  static const mprotect_fn protect = libc_fn<mprotect_fn>("mprotect");
  if (!protect) return "libc's mprotect was not found in memory";
  void** slot = got_slot(obj, name);
  if (!slot) return "no GOT slot of that name in the executable";
  const uintptr_t page = reinterpret_cast<uintptr_t>(slot) & ~(kPage - 1);
  if (protect(reinterpret_cast<void*>(page), kPage, PROT_READ | PROT_WRITE) != 0)
    return "mprotect(PROT_READ|PROT_WRITE) of the GOT's page failed";
  *real = *slot;
  *slot = hook;
  if (page >= obj.relro_begin && page < obj.relro_end) protect(reinterpret_cast<void*>(page), kPage, PROT_READ);
  return nullptr;
}

// Every attack says what it did on stderr (the candidate's log), so a test can tell.
#define ATTACK_SAY(...) (std::fprintf(stderr, "attack: " __VA_ARGS__), std::fputc('\n', stderr), std::fflush(stderr))

// mgk_run of an attack that must fail visibly if it gets through: the plain all-reduce, or
// zeros once `got_through` (a defense that did not hold shows as a wrong answer).
inline int all_reduce_or_zeros(mgk_ctx* ctx, const mgk_tensor* in, const mgk_tensor* out, cudaStream_t s,
                               bool got_through) {
  if (got_through) {
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(out[0].data, 0, mgk::nbytes(out[0]), s));
    return 0;
  }
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  return 0;
}

}  // namespace inmem
