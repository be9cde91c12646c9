#include "eval/imports.h"

#include <cxxabi.h>
#include <elf.h>

#include <cstring>
#include <regex>
#include <set>
#include <sstream>

#include "common/error.h"
#include "common/file.h"
#include "process/run.h"

namespace mgk::eval {

namespace fs = std::filesystem;

namespace {

// Refused by name, with the reason. Checked before the allow-list.
struct Refusal {
  const char* pattern;
  const char* why;
};
const Refusal kRefused[] = {
    {R"(dlopen|dlmopen|dlsym|dlvsym|dladdr1?|dlinfo|dl_iterate_phdr|cuModuleLoad\w*|cuLibraryLoad\w*|cudaLibraryLoad\w*|cuLink\w*|cuGetProcAddress\w*|cudaGetDriverEntryPoint\w*|__libc_dlopen\w*)",
     "candidates may not load or look up code at run time"},
    {R"(nccl\w*)", "candidates may not call NCCL: the task is to replace it"},
    {R"(cuMulticast\w*)", "NVLink multicast is off on these machines and must stay off"},
    {R"(cudaDeviceReset|cuDevicePrimaryCtxReset\w*|cuCtxDestroy\w*)", "resetting the device destroys the harness's state"},
    {R"(fork|vfork|_Fork|clone3?|execl[ep]?|execv[ep]?|execvpe|fexecve|posix_spawnp?|system|popen|daemon)",
     "candidates may not start processes"},
    {R"(pthread_create|thrd_create|_ZNSt6thread\w*|_ZNSt3__16thread\w*)", "candidates may not start threads"},
    {R"(syscall)", "candidates may not make raw system calls"},
    {R"(mprotect|pkey_mprotect|mmap|mmap64|mremap|shm_open|memfd_create)",
     "candidates may not map memory or change its protection"},
    {R"(socket|socketpair|connect|bind|listen|accept4?|send|sendto|sendmsg|recv|recvfrom|recvmsg|getaddrinfo|gethostbyname\w*|shutdown)",
     "candidates may not use sockets"},
    {R"(ptrace|process_vm_readv|process_vm_writev|prctl|setns|unshare|mount|umount2?|chroot|pivot_root|set[ug]id|setres[ug]id|capset|kill|tgkill)",
     "candidates may not control processes or the system"},
};

// The allow-list: what a kernel's host code has reason to call.
const char* const kAllowedPatterns[] = {
    R"(cuda[A-Z]\w*)",   // the CUDA runtime API
    R"(__cuda\w*)",      // the runtime's kernel registration, emitted by nvcc
    R"(cu[A-Z]\w*)",     // the CUDA driver API
    R"(cublas\w*)",      // cuBLAS and cuBLASLt
    R"(_Z\w+)",          // C++ (libstdc++), minus what is refused above
    R"(__cxa_\w+|__gxx_personality_v0|_Unwind_\w+|__dso_handle|__stack_chk_fail|__assert_fail|_ITM_\w+|__gmon_start__|__tls_get_addr|__errno_location)",
    // libc: memory and strings
    R"(mem(cpy|move|set|cmp|chr)|__mem(cpy|move|set)_chk|str(len|nlen|cmp|ncmp|cpy|ncpy|cat|ncat|chr|rchr|str|dup|ndup|tol|toll|toul|toull|tod|tof|error)|__str(cpy|ncpy|cat)_chk|ato[ifl]|abs|labs|llabs)",
    // libc: printing to stdout and stderr (where the rank log catches it)
    R"(printf|fprintf|sprintf|snprintf|vprintf|vfprintf|vsprintf|vsnprintf|puts|fputs|fputc|putc|putchar|fwrite|fflush|__(v?f?s?n?printf)_chk|stdout|stderr)",
    // libc: heap, sorting, time, exits
    R"(malloc|calloc|realloc|free|posix_memalign|aligned_alloc|memalign|qsort|bsearch|rand|srand|clock|clock_gettime|gettimeofday|time|nanosleep|usleep|sched_yield|abort|exit|atexit|getenv|secure_getenv)",
    // libm
    R"((sqrt|cbrt|exp|exp2|expm1|log|log2|log10|log1p|pow|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|erf|erfc|fabs|floor|ceil|round|lround|llround|trunc|fmod|fmax|fmin|frexp|ldexp|modf|hypot|nearbyint|rint|lrint|llrint|copysign|nextafter|remainder|scalbn|ilogb|logb|tgamma|lgamma|fma)[fl]?)",
};

const char* const kAllowedLibraries = R"((libcudart|libcuda|libcublas|libcublasLt|libstdc\+\+|libm|libgcc_s|libc|libdl|libpthread|librt)\.so(\.\d+)*|ld-linux-x86-64\.so\.2)";

template <typename T>
T read_at(const std::string& bytes, size_t offset) {
  if (offset + sizeof(T) > bytes.size()) throw Error("truncated ELF file");
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof(T));
  return v;
}

std::string c_string_at(const std::string& bytes, size_t offset) {
  if (offset >= bytes.size()) throw Error("ELF string out of range");
  return std::string(bytes.c_str() + offset, strnlen(bytes.c_str() + offset, bytes.size() - offset));
}

}  // namespace

ElfLinkage read_linkage(const fs::path& library) {
  const std::string bytes = read_file(library, "built library");
  auto bad = [&](const std::string& what) { return Error(library.string() + ": " + what); };
  if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0 ||
      bytes[EI_CLASS] != ELFCLASS64)
    throw bad("not a 64-bit ELF file");
  const auto eh = read_at<Elf64_Ehdr>(bytes, 0);
  std::vector<Elf64_Shdr> sections;
  for (int i = 0; i < eh.e_shnum; ++i) sections.push_back(read_at<Elf64_Shdr>(bytes, eh.e_shoff + size_t(i) * eh.e_shentsize));
  ElfLinkage out;
  for (const auto& s : sections) {
    if (s.sh_type == SHT_DYNSYM) {
      if (s.sh_link >= sections.size()) throw bad("bad symbol table");
      const auto& strtab = sections[s.sh_link];
      for (size_t off = s.sh_offset + sizeof(Elf64_Sym); off + sizeof(Elf64_Sym) <= s.sh_offset + s.sh_size;
           off += sizeof(Elf64_Sym)) {
        const auto sym = read_at<Elf64_Sym>(bytes, off);
        std::string name = c_string_at(bytes, strtab.sh_offset + sym.st_name);
        if (name.empty()) continue;
        const int bind = ELF64_ST_BIND(sym.st_info);
        if (sym.st_shndx == SHN_UNDEF) out.imports.push_back(name);
        else if ((bind == STB_GLOBAL || bind == STB_WEAK) && ELF64_ST_TYPE(sym.st_info) == STT_FUNC) out.exports.push_back(name);
      }
    } else if (s.sh_type == SHT_DYNAMIC) {
      if (s.sh_link >= sections.size()) throw bad("bad dynamic section");
      const auto& strtab = sections[s.sh_link];
      for (size_t off = s.sh_offset; off + sizeof(Elf64_Dyn) <= s.sh_offset + s.sh_size; off += sizeof(Elf64_Dyn)) {
        const auto d = read_at<Elf64_Dyn>(bytes, off);
        if (d.d_tag == DT_NULL) break;
        if (d.d_tag == DT_NEEDED) out.needed.push_back(c_string_at(bytes, strtab.sh_offset + d.d_un.d_val));
      }
    }
  }
  return out;
}

std::optional<ImportViolation> check_imports(const ElfLinkage& linkage) {
  static const std::regex libraries(kAllowedLibraries);
  for (const auto& lib : linkage.needed)
    if (!std::regex_match(lib, libraries))
      return ImportViolation{lib,
                             std::regex_search(lib, std::regex("nccl"))
                                 ? "candidates may not link NCCL: the task is to replace it"
                                 : "candidates may link only the CUDA runtime and driver, cuBLAS and the C/C++ runtime",
                             true};
  static const std::vector<std::pair<std::regex, const char*>> refused = [] {
    std::vector<std::pair<std::regex, const char*>> v;
    for (const auto& r : kRefused) v.emplace_back(std::regex(r.pattern), r.why);
    return v;
  }();
  static const std::vector<std::regex> allowed = [] {
    std::vector<std::regex> v;
    for (const char* p : kAllowedPatterns) v.emplace_back(p);
    return v;
  }();
  for (const auto& sym : linkage.imports) {
    for (const auto& [re, why] : refused)
      if (std::regex_match(sym, re)) return ImportViolation{sym, why, false};
    bool ok = false;
    for (const auto& re : allowed)
      if (std::regex_match(sym, re)) ok = true;
    if (!ok)
      return ImportViolation{sym,
                             "not on the list of what a candidate may call (the CUDA runtime and driver, cuBLAS, "
                             "and the basics of libc, libm and libstdc++)",
                             false};
  }
  return std::nullopt;
}

std::optional<std::string> missing_abi_export(const ElfLinkage& linkage) {
  const std::set<std::string> exports(linkage.exports.begin(), linkage.exports.end());
  for (const char* f : {"mgk_setup", "mgk_run", "mgk_teardown"})
    if (!exports.count(f)) return std::string(f);
  return std::nullopt;
}

std::optional<std::string> raw_system_call(const fs::path& library) {
  std::string objdump = process::find_program("objdump", "/usr/bin:/bin:/usr/local/bin").string();
  if (objdump.empty()) throw Error("objdump is missing (install binutils): mgk needs it to check built kernels");
  process::ProcessResult r =
      process::run_tool({objdump, "-d", "--no-show-raw-insn", "-j", ".text", library.string()}, std::chrono::minutes(1));
  if (!r.ok()) throw Error("objdump failed on " + library.string() + ": " + r.output.substr(0, 300));
  static const std::regex instruction(R"(^\s*([0-9a-f]+):\s+(syscall|sysenter|int\s+\$0x80)\b)");
  std::istringstream in(r.output);
  std::string function;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.size() > 2 && line.back() == ':' && line.find('<') != std::string::npos) function = line;
    if (std::regex_search(line, m, instruction))
      return "a '" + m[2].str() + "' instruction at offset 0x" + m[1].str() +
             (function.empty() ? "" : " in " + function.substr(function.find('<')));
  }
  return std::nullopt;
}

std::string demangle(const std::string& symbol) {
  int status = 0;
  char* d = abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d) return symbol;
  std::string out(d);
  std::free(d);
  return out;
}

}  // namespace mgk::eval
