#include "eval/imports.h"

#include <cxxabi.h>

#include <cstring>
#include <regex>
#include <set>
#include <span>
#include <sstream>

#include "common/error.h"
#include "eval/elf.h"

namespace mgk::eval {

namespace fs = std::filesystem;

namespace {

// Refused by name, with the reason. Checked before the allow-list.
struct Refusal {
  const char* pattern;
  Rule rule;
};
const Refusal kRefused[] = {
    {R"(dlopen|dlmopen|dlsym|dlvsym|dladdr1?|dlinfo|dl_iterate_phdr|cuModuleLoad\w*|cuLibraryLoad\w*|cudaLibraryLoad\w*|cuLink\w*|cuGetProcAddress\w*|cudaGetDriverEntryPoint\w*|cudaGetExportTable|cuGetExportTable|__libc_dlopen\w*|cufftXtSetJITCallback)",
     Rule::kCodeLoading},
    {R"(nccl\w*)", Rule::kNccl},
    {R"(cuMulticast\w*)", Rule::kMulticast},
    {R"(cudaDeviceReset|cuDevicePrimaryCtxReset\w*|cuCtxDestroy\w*)", Rule::kDeviceReset},
    {R"(fork|vfork|_Fork|clone3?|execl[ep]?|execv[ep]?|execvpe|fexecve|posix_spawnp?|system|popen|daemon)",
     Rule::kProcesses},
    {R"(pthread_create|thrd_create|_ZNSt6thread\w*|_ZNSt3__16thread\w*)", Rule::kThreads},
    {R"(syscall)", Rule::kSystemCalls},
    {R"(mprotect|pkey_mprotect|mmap|mmap64|mremap|shm_open|memfd_create)",
     Rule::kMemoryMapping},
    {R"(socket|socketpair|connect|bind|listen|accept4?|send|sendto|sendmsg|recv|recvfrom|recvmsg|getaddrinfo|gethostbyname\w*|shutdown)",
     Rule::kSockets},
    {R"(ptrace|process_vm_readv|process_vm_writev|prctl|setns|unshare|mount|umount2?|chroot|pivot_root|set[ug]id|setres[ug]id|capset|kill|tgkill)",
     Rule::kProcessControl},
};

// Of libstdc++, what kernel host code has no reason to use; judged on the demangled name,
// after the refusals above (std::thread's mangled names are among those).
const Refusal kRefusedCxx[] = {
    {R"(std::(__fs::|experimental::)?filesystem::)", Rule::kFiles},
    {R"(basic_(i|o)?fstream|basic_filebuf|__basic_file)", Rule::kFiles},
    {R"(std::(thread|jthread)\b)", Rule::kThreads},
};

// The allow-list: what a kernel's host code has reason to call.
const char* const kAllowedPatterns[] = {
    R"(cuda[A-Z]\w*)",   // the CUDA runtime API
    R"(__cuda\w*)",      // the runtime's kernel registration, emitted by nvcc
    R"(cu[A-Z]\w*)",     // the CUDA driver API
    R"(cublas\w*)",      // cuBLAS and cuBLASLt
    R"(cufft\w*)",       // cuFFT
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

const char* const kAllowedLibraries = R"((libcudart|libcuda|libcublas|libcublasLt|libcufft|libstdc\+\+|libm|libgcc_s|libc|libdl|libpthread|librt)\.so(\.\d+)*|ld-linux-x86-64\.so\.2)";

}  // namespace

ElfLinkage read_linkage(const fs::path& library) { return linkage_of(ElfImage(library)); }

ElfLinkage linkage_of(const ElfImage& elf) {
  ElfLinkage out;
  out.needed = elf.needed();
  for (const auto& sym : elf.dynamic_symbols()) {
    if (!sym.defined) {
      out.imports.push_back(sym.name);
      continue;
    }
    const bool global = sym.bind == STB_GLOBAL || sym.bind == STB_WEAK || sym.bind == STB_GNU_UNIQUE;
    if (global && sym.type == STT_FUNC) out.exports.push_back(sym.name);
    if (global && sym.visibility != STV_HIDDEN && sym.visibility != STV_INTERNAL)
      out.defined.push_back({sym.name, sym.bind == STB_GLOBAL});
  }
  return out;
}

std::optional<ImportViolation> check_imports(const ElfLinkage& linkage) {
  static const std::regex libraries(kAllowedLibraries);
  for (const auto& lib : linkage.needed)
    if (!std::regex_match(lib, libraries))
    {
      const Rule rule = std::regex_search(lib, std::regex("nccl")) ? Rule::kNccl : Rule::kLinking;
      return ImportViolation{lib, rule_info(rule).why, rule, true};
    }
  auto compiled = [](std::span<const Refusal> table) {
    std::vector<std::pair<std::regex, Rule>> v;
    for (const auto& r : table) v.emplace_back(std::regex(r.pattern), r.rule);
    return v;
  };
  static const std::vector<std::pair<std::regex, Rule>> refused = compiled(kRefused);
  static const std::vector<std::regex> allowed = [] {
    std::vector<std::regex> v;
    for (const char* p : kAllowedPatterns) v.emplace_back(p);
    return v;
  }();
  static const std::vector<std::pair<std::regex, Rule>> refused_cxx = compiled(kRefusedCxx);
  auto violation = [](const std::string& sym, Rule rule) { return ImportViolation{sym, rule_info(rule).why, rule}; };
  for (const auto& sym : linkage.imports) {
    for (const auto& [re, rule] : refused)
      if (std::regex_match(sym, re)) return violation(sym, rule);
    if (sym.rfind("_Z", 0) == 0) {
      const std::string name = demangle(sym);
      for (const auto& [re, rule] : refused_cxx)
        if (std::regex_search(name, re)) return violation(sym, rule);
    }
    bool ok = false;
    for (const auto& re : allowed)
      if (std::regex_match(sym, re)) ok = true;
    if (!ok) return ImportViolation{sym, std::string("not on the list of what a candidate may call: ") + rule_info(Rule::kLinking).why, Rule::kLinking};
  }
  return std::nullopt;
}

namespace {

// Every name the C and C++ runtime libraries of this machine define, C and C++ apart.
struct RuntimeNames {
  std::set<std::string> c, cxx;
};

const RuntimeNames& runtime_names() {
  static const RuntimeNames names = [] {
    RuntimeNames n;
    for (const char* lib : {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "libstdc++.so.6"})
      for (const char* dir : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"}) {
        const fs::path p = fs::path(dir) / lib;
        if (!fs::exists(p)) continue;
        const ElfImage image(p);
        for (const auto& sym : image.dynamic_symbols())
          if (sym.defined && sym.visibility == STV_DEFAULT) (sym.name.rfind("_Z", 0) == 0 ? n.cxx : n.c).insert(sym.name);
        break;
      }
    return n;
  }();
  return names;
}

}  // namespace

std::optional<ImportViolation> shadowed_name(const ElfLinkage& linkage) {
  static const std::regex cuda(R"((cuda|cu[A-Z]|cublas|cudnn|nccl|__cuda)\w*)");
  static const std::regex new_delete(R"(_Z(nw|na|dl|da)\w*)");
  const RuntimeNames& rt = runtime_names();
  for (const auto& d : linkage.defined) {
    const char* whose = nullptr;
    if (std::regex_match(d.name, cuda)) whose = "the CUDA libraries";
    else if (std::regex_match(d.name, new_delete)) whose = "the C++ runtime (operator new or delete)";
    else if (d.name.rfind("_Z", 0) != 0 && rt.c.count(d.name)) whose = "the C library";
    // Inline and template code of libstdc++'s headers is emitted (weak) by every user of
    // it: only a strong definition replaces the library's.
    else if (d.strong && rt.cxx.count(d.name)) whose = "the C++ runtime";
    if (whose)
      return ImportViolation{d.name,
                             std::string("the library defines a name of ") + whose + ": " +
                                 rule_info(Rule::kShadowing).why,
                             Rule::kShadowing};
  }
  return std::nullopt;
}

std::optional<std::string> missing_abi_export(const ElfLinkage& linkage) {
  const std::set<std::string> exports(linkage.exports.begin(), linkage.exports.end());
  for (const char* f : {"mgk_setup", "mgk_run", "mgk_teardown"})
    if (!exports.count(f)) return std::string(f);
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
