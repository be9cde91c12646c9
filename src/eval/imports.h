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

namespace mgk::eval {

struct ElfLinkage {
  std::vector<std::string> needed;   // DT_NEEDED
  std::vector<std::string> imports;  // undefined dynamic symbols
  std::vector<std::string> exports;  // defined global functions
};

// Throws mgk::Error when `library` is not a readable 64-bit ELF shared object.
ElfLinkage read_linkage(const std::filesystem::path& library);

struct ImportViolation {
  std::string symbol;  // or library, for a refused DT_NEEDED
  std::string why;
  bool is_library = false;
};

// The first import (or needed library) a candidate may not have; nullopt when all pass.
std::optional<ImportViolation> check_imports(const ElfLinkage& linkage);

// The first ABI function the library does not export, if any.
std::optional<std::string> missing_abi_export(const ElfLinkage& linkage);

// Host instructions that make a system call directly (syscall, sysenter, int 0x80) in the
// library's code, found with objdump; one line naming the first, or nullopt. Throws
// mgk::Error when objdump is missing (install binutils).
std::optional<std::string> raw_system_call(const std::filesystem::path& library);

// A C++ symbol demangled ("std::thread::join()"), or the name itself.
std::string demangle(const std::string& symbol);

}  // namespace mgk::eval
