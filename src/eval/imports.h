// What a built candidate library may link against, judged on the library itself: its
// dynamic symbol imports and the shared libraries it needs, against an allow-list (the CUDA
// runtime and driver, cuBLAS, and the basics of libc, libm and libstdc++). Code loading,
// NCCL, starting processes or threads, raw system calls, memory protection changes, sockets
// and process control are refused by name; anything else not on the list is refused too.
// Candidates link the CUDA runtime as a shared library, so these imports are the
// candidate's own and not the runtime's.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "eval/candidate_rules.h"

namespace mgk::eval {

struct DefinedName {
  std::string name;
  bool strong = false;  // STB_GLOBAL (not weak, not unique)
};

struct ElfLinkage {
  std::vector<std::string> needed;   // DT_NEEDED
  std::vector<std::string> imports;  // undefined dynamic symbols
  std::vector<std::string> exports;  // defined global functions
  std::vector<DefinedName> defined;  // every defined dynamic symbol others can bind to
};

class ElfImage;
ElfLinkage linkage_of(const ElfImage& library);
// Throws mgk::Error when `library` is not a readable 64-bit ELF shared object.
ElfLinkage read_linkage(const std::filesystem::path& library);

struct ImportViolation {
  std::string symbol;  // or library, for a refused DT_NEEDED
  std::string why;
  Rule rule = Rule::kLinking;
  bool is_library = false;
};

// The first import (or needed library) a candidate may not have; nullopt when all pass.
std::optional<ImportViolation> check_imports(const ElfLinkage& linkage);

// The first name the library defines that belongs to a library it runs beside: the CUDA,
// cuBLAS and NCCL APIs (by prefix), and what libc, libm, libgcc_s and libstdc++ define on
// this machine (C names whatever their binding, C++ names when strong, operator new and
// delete always). Such a definition could stand in for the library's own.
std::optional<ImportViolation> shadowed_name(const ElfLinkage& linkage);

// The first ABI function the library does not export, if any.
std::optional<std::string> missing_abi_export(const ElfLinkage& linkage);

// A C++ symbol demangled ("std::thread::join()"), or the name itself.
std::string demangle(const std::string& symbol);

}  // namespace mgk::eval
