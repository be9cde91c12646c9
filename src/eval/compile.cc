#include "eval/compile.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <fstream>
#include <mutex>
#include <optional>
#include <regex>

#include "common/env.h"
#include "common/error.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/interrupt.h"
#include "eval/compile_cache.h"
#include "eval/elf.h"
#include "eval/executable_code.h"
#include "eval/imports.h"
#include "eval/source_policy.h"
#include "problems/catalog.h"
#include "common/text.h"
#include "process/run.h"
#include "sandboxing/environment.h"

namespace mgk::eval {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxSourceBytes = size_t(4) << 20;

std::string tree_digest(const fs::path& dir) {
  if (!fs::is_directory(dir)) return "";
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  Sha256 h;
  for (const auto& f : files) h.update(f.string()).update(read_file(f, "header"));
  return h.hex();
}

// nvcc with only what decides where the toolkit and the host compiler are.
// `unwanted`, when set, kills it too (a build the preprocessed source made pointless).
process::ProcessResult run_nvcc(const std::vector<std::string>& argv, const fs::path& cwd,
                                const std::atomic<bool>* unwanted = nullptr) {
  process::RunSpec spec;
  spec.argv = argv;
  spec.env = sandboxing::scrubbed_environment(process::current_environment(), {}, cwd, sandboxing::EnvPolicy::kCompiler);
  spec.working_dir = cwd;
  spec.timeout_s = 300;
  spec.limits = process::Limits{0, 0, 0, 0};
  spec.cancel = &interrupt_flag();
  spec.also_cancel = unwanted;
  spec.output_limit = size_t(64) << 20;
  spec.output_keep = size_t(32) << 20;
  return process::run(spec);
}

}  // namespace

std::string nvcc_version() {
  static std::once_flag once;
  static std::string v;
  std::call_once(once, [] {  // a throw leaves `once` unset: the next call asks again
    process::ProcessResult p;
    try {
      p = run_nvcc({nvcc_path(), "--version"}, fs::temp_directory_path());
    } catch (const Error&) {
      return;  // nvcc cannot start: the compile that follows says so
    }
    if (p.cancelled) throw Interrupted();  // not "": that would key this process's builds wrongly
    v = p.output;
  });
  return v;
}

namespace {

// The toolchain's own headers: covered by nvcc's version and the system's packages, so the
// fast path does not hash them (mgk's headers and anything else it does).
std::vector<fs::path> system_dirs() {
  std::vector<fs::path> dirs = {"/usr/include", "/usr/lib/gcc", "/usr/local/cuda", "/opt/nvidia"};
  const fs::path nvcc = fs::weakly_canonical(nvcc_path());
  if (nvcc.has_parent_path()) dirs.push_back(nvcc.parent_path().parent_path());  // the toolkit nvcc belongs to
  return dirs;
}

// Where the trusted headers live: lines from them are not judged. The toolchain's, mgk's own
// that the build may include, and /usr/local/include (trusted, but hashed by the fast path:
// no package version covers it).
std::vector<fs::path> trusted_dirs(bool is_reference) {
  std::vector<fs::path> dirs = mgk_header_dirs(is_reference);
  dirs.push_back("/usr/local/include");
  for (auto& d : system_dirs()) dirs.push_back(std::move(d));
  return dirs;
}

// A private working directory under the cache, removed when done (Ctrl-C included).
struct WorkDir {
  fs::path path;
  explicit WorkDir(const fs::path& parent) {
    fs::create_directories(parent);
    std::string tmpl = (parent / "build-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw Error("cannot create a build directory under " + parent.string());
    path = tmpl;
  }
  ~WorkDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};


// nvcc names the staged copy kStagedName; the user knows the file by the name they gave
// (the agent gives one without folders). Only whole names are replaced: not my_kernel.cu.
std::string named(const std::string& text, const std::string& shown) {
  const std::string from = kStagedName;
  auto part_of_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-'; };
  std::string out;
  size_t done = 0;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + from.size())) {
    const bool whole = (at == 0 || !part_of_name(text[at - 1])) &&
                       (at + from.size() == text.size() || !part_of_name(text[at + from.size()]) ||
                        text[at + from.size()] == '.');
    if (!whole) continue;
    out.append(text, done, at - done).append(shown);
    done = at + from.size();
  }
  return out.append(text, done, std::string::npos);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}


// Why the built library is refused, if it is: its exports, and for a candidate its imports,
// the names it defines and its host instructions.
struct Refusal {
  std::string why;
  std::optional<Rule> rule;  // its class, where it has one
};
std::optional<Refusal> library_refusal(const fs::path& built, const std::string& source,
                                           const std::string& shown_file, bool is_reference) {
  const ElfImage elf(built);
  const ElfLinkage linkage = linkage_of(elf);
  if (auto missing = missing_abi_export(linkage))
    return Refusal{"the library does not export '" + *missing +
                   "' (define it with MGK_EXPORT, i.e. extern \"C\" and default visibility)",
                   std::nullopt};
  if (is_reference) return std::nullopt;
  if (auto bad = check_imports(linkage)) {
    if (bad->is_library) return Refusal{"it links " + bad->symbol + ": " + bad->why, bad->rule};
    const std::string name = demangle(bad->symbol);
    // Where the call is, when the text names it: the first call of it outside comments.
    std::string where;
    const std::string base = name.substr(0, name.find('('));
    const std::string ident = base.substr(base.rfind(':') == std::string::npos ? 0 : base.rfind(':') + 1);
    const std::string code = strip_comments(source, false);
    std::smatch m;
    const bool plain = !ident.empty() && std::all_of(ident.begin(), ident.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    if (plain && std::regex_search(code, m, std::regex("\\b" + ident + "\\s*\\(")))
      where = shown_file + ":" + std::to_string(1 + std::count(code.begin(), code.begin() + m.position(0), '\n')) + ": ";
    return Refusal{where + "the built library imports '" + name + "': " + bad->why, bad->rule};
  }
  if (auto shadow = shadowed_name(linkage))
    return Refusal{"the built library defines '" + demangle(shadow->symbol) + "': " + shadow->why, shadow->rule};
  if (auto bad_code = executable_code_violation(elf))
    return Refusal{"the built library's host code: " + *bad_code + ": " + rule_info(Rule::kHiddenCode).why,
                   Rule::kHiddenCode};
  return std::nullopt;
}

std::string read_ptx(const fs::path& dir) {
  std::string all;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".ptx") all += read_file(e.path(), "generated PTX");
  return all;
}

// The flags of a build: those the keys hold, the libraries, and nvcc's own (the keys'
// with the kernel's folder on the include path).
struct Flags {
  std::vector<std::string> keyed, libs, nvcc;
};
Flags flags_of(const CompileRequest& req) {
  // The kernel's own folder is on the include path (its headers) but in neither key: what
  // the kernel took from it is in the preprocessed source, and in the manifest.
  Flags f;
  f.keyed = nvcc_flags(req.arch);
  for (const fs::path& dir : mgk_header_dirs(req.is_reference)) f.keyed.push_back("-I" + dir.string());
  const size_t own_dir_at = f.keyed.size();  // after mgk's headers, before the problem's
  if (!req.problem_dir.empty()) f.keyed.push_back("-I" + req.problem_dir.string());
  for (const auto& d : req.defines) f.keyed.push_back("-D" + d);
  for (const auto& x : req.extra_flags) f.keyed.push_back(x);
  f.libs = linked_libraries(req.is_reference);
  f.nvcc = f.keyed;
  f.nvcc.insert(f.nvcc.begin() + own_dir_at, "-I" + fs::absolute(req.source).parent_path().string());
  return f;
}

}  // namespace

std::vector<std::string> nvcc_flags(const std::string& arch_in) {
  const std::string arch = arch_in.empty() ? "sm_90a" : arch_in;
  const std::string arch_num = arch.substr(3);  // "90a"
  // Candidates and references alike link the CUDA runtime shared: the process's one runtime
  // is used, and a candidate's imports are its own, not the statically linked runtime's.
  return {"-std=c++20", "-O3", "-shared", "-Xcompiler", "-fPIC", "-lineinfo", "--expt-relaxed-constexpr",
          "--extended-lambda", "-cudart", "shared", "-gencode=arch=compute_" + arch_num + ",code=sm_" + arch_num};
}

std::vector<fs::path> mgk_header_dirs(bool is_reference) {
  const fs::path root = root_dir();
  if (is_reference) return {root / "src/abi", root / "sandbox/reference", root / "primitives"};
  return {root / "src/abi", root / "primitives"};
}

std::vector<fs::path> include_dirs(const CompileRequest& request) {
  std::vector<fs::path> dirs = mgk_header_dirs(request.is_reference);
  dirs.push_back(fs::absolute(request.source).parent_path());
  if (!request.problem_dir.empty()) dirs.push_back(request.problem_dir);
  return dirs;
}

std::vector<std::string> linked_libraries(bool is_reference) {
  // cuFFT for both: a distributed FFT's local transforms are library work, as torch.fft is
  // for ParallelKernelBench's solutions. cuDNN (attention) for the references only: it can
  // deserialise execution plans, compiled device code the candidate checks (imports, PTX)
  // would never see.
  std::vector<std::string> libs = {"-lcublas", "-lcublasLt", "-lcufft"};
  if (is_reference) libs.insert(libs.end(), {"-lcudnn", "-lnccl"});
  return libs;
}

std::vector<std::string> nvcc_command(const CompileRequest& req, const fs::path& output) {
  const Flags f = flags_of(req);
  std::vector<std::string> argv = {nvcc_path()};
  argv.insert(argv.end(), f.nvcc.begin(), f.nvcc.end());
  argv.insert(argv.end(), {"-o", output.string(), req.source.string()});
  argv.insert(argv.end(), f.libs.begin(), f.libs.end());
  return argv;
}

std::string nvcc_path() {
  if (auto p = env("MGK_NVCC")) return *p;
  if (auto home = env("CUDA_HOME"); home && fs::exists(fs::path(*home) / "bin/nvcc"))
    return (fs::path(*home) / "bin/nvcc").string();
  if (fs::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return "nvcc";
}

std::pair<std::string, std::string> read_kernel_source(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw UsageError("no such kernel file: " + path.string());
  if (fs::is_directory(path, ec)) throw UsageError(path.string() + " is a directory, not a kernel file (.cu)");
  if (!fs::is_regular_file(path, ec)) throw UsageError(path.string() + " is not a regular file");
  if (fs::file_size(path, ec) > kMaxSourceBytes)
    return {"", path.filename().string() + " is larger than 4 MiB: not a kernel source"};
  std::string bytes = read_file(path, "kernel file", ExitCode::kUsage);
  if (bytes.empty()) return {bytes, path.filename().string() + " is empty"};
  const std::string valid = to_valid_utf8(bytes);
  if (valid != bytes) {
    size_t at = 0;
    while (at < bytes.size() && at < valid.size() && bytes[at] == valid[at]) ++at;
    return {"", path.filename().string() + " is not UTF-8 text (the first invalid byte is at offset " +
                    std::to_string(at) + "): save it as UTF-8"};
  }
  if (bytes.find('\0') != std::string::npos) return {"", path.filename().string() + " contains NUL bytes: not a source file"};
  return {bytes, ""};
}

CompileResult compile(const CompileRequest& req) {
  install_interrupt_handler();
  const auto t0 = std::chrono::steady_clock::now();
  CompileResult r;
  auto [source, unreadable] = read_kernel_source(req.source);
  if (!unreadable.empty()) {
    r.unreadable = unreadable;
    r.log = unreadable;
    return r;
  }
  r.source = std::move(source);
  r.kernel_hash = sha256_hex(r.source);
  const std::string shown = req.shown_as.empty() ? req.source.string() : req.shown_as;
  const std::string shown_file = fs::path(shown).filename().string();

  const fs::path kernel_dir = fs::absolute(req.source).parent_path();
  const auto [flags, libs, nvcc_args] = flags_of(req);

  // What both keys share: how it is built and judged (a reference skips the import checks,
  // so its library is never a candidate's), and with what.
  std::string toolchain = nvcc_version() + "\n";
  for (const fs::path& dir : mgk_header_dirs(req.is_reference)) toolchain += tree_digest(dir) + "\n";
  auto common = [&](Sha256& h) {
    h.update(req.is_reference ? "reference\n" : "candidate\n");
    for (const auto& f : flags) h.update(f).update("\n");
    for (const auto& l : libs) h.update(l).update("\n");
    h.update(toolchain);
  };
  Sha256 pre;
  common(pre);
  pre.update(req.problem_dir.empty() ? "" : tree_digest(req.problem_dir)).update("\nkernel:\n").update(r.source);
  const std::string pre_key = pre.hex();

  const CompileCache cache(home_dir() / "cache");
  auto hit = [&](const std::string& build_key) {
    r.build_key = build_key;
    r.library = cache.library(build_key);
    r.ok = r.cached = true;
    r.log = named(cache.log(build_key), shown);
    r.phases.lookup = seconds_since(t0);
    return r;
  };
  // The fast path: the same bytes, built before and checked, with every header it read unchanged.
  if (!req.checks_only)
    if (auto build_key = cache.find(pre_key, kernel_dir)) return hit(*build_key);

  // The exact bytes read above are what nvcc sees: a copy under one name, in a folder that
  // depends only on the bytes, compiled from there (so nvcc's messages name kStagedName).
  WorkDir work(cache.root() / "tmp");
  const fs::path staged = cache.stage(r.kernel_hash, r.source);
  const fs::path staged_dir = staged.parent_path();
  r.phases.lookup = seconds_since(t0);

  // The build starts at once, beside the preprocessor (a tenth of a build): what the
  // preprocessed source says (a refusal, a library built before) decides whether it is wanted.
  const fs::path built = work.path / "kernel.so";
  std::vector<std::string> argv = {nvcc_path()};
  if (req.checks_only) {
    argv.insert(argv.end(), nvcc_args.begin(), nvcc_args.end());
    argv.insert(argv.end(), {"--ptx", "-o", (work.path / "kernel.ptx").string(), kStagedName});
  } else {
    argv.insert(argv.end(), {"--keep", "--keep-dir", work.path.string()});
    argv.insert(argv.end(), nvcc_args.begin(), nvcc_args.end());
    argv.insert(argv.end(), {"-o", built.string(), kStagedName});
    argv.insert(argv.end(), libs.begin(), libs.end());
  }
  std::atomic<bool> unwanted{false};
  auto build = std::async(std::launch::async, [&] { return run_nvcc(argv, staged_dir, &unwanted); });
  struct Unwanted {  // destroyed before `build`, whose destructor waits: never wait on a build nobody wants
    std::atomic<bool>& flag;
    ~Unwanted() { flag = true; }
  } unwanted_on_exit{unwanted};

  std::vector<std::string> pre_argv = {nvcc_path(), "-E"};
  pre_argv.insert(pre_argv.end(), nvcc_args.begin(), nvcc_args.end());
  pre_argv.insert(pre_argv.end(), {kStagedName, "-o", (work.path / "preprocessed.ii").string()});
  process::ProcessResult p = run_nvcc(pre_argv, staged_dir, nullptr);
  r.phases.preprocess = p.wall_seconds;
  if (p.cancelled) throw Interrupted();
  if (p.exit_code != 0) {
    r.log = named(p.output, shown);
    r.seconds = p.wall_seconds;
    return r;
  }
  const std::string preprocessed = read_file(work.path / "preprocessed.ii", "preprocessed source");
  if (auto v = check_preprocessed(preprocessed, trusted_dirs(req.is_reference), req.is_reference)) {
    if (v->file == kStagedName) v->file = shown;
    r.refusal = v->describe();
    r.refused_rule = rule_info(v->rule).id;
    r.log = shown + ": refused: " + r.refusal;
    return r;
  }

  // The key covers everything the host pass included (the preprocessed text) and the
  // trusted headers whole (their device-only branches do not show in the host pass).
  Sha256 key;
  common(key);
  key.update("\npreprocessed:\n").update(preprocessed);
  r.build_key = key.hex();
  r.library = req.checks_only ? fs::path() : cache.library(r.build_key);
  if (!req.checks_only && fs::exists(r.library)) {
    cache.link(pre_key, r.build_key);  // the next time, found without nvcc
    return hit(r.build_key);
  }

  p = build.get();
  r.seconds = p.wall_seconds;
  r.phases.nvcc = p.wall_seconds;
  r.log = p.output;
  if (p.cancelled) throw Interrupted();
  if (p.timed_out) r.log += "\nnvcc did not finish within 5 minutes";
  const std::string raw_log = r.log;
  r.log = named(r.log, shown);
  if (p.exit_code != 0) return r;

  auto refuse = [&](const std::string& why, std::optional<Rule> rule) {
    r.refusal = why;
    if (rule) r.refused_rule = rule_info(*rule).id;
    r.log += (r.log.empty() ? "" : "\n") + shown + ": refused: " + why;
    return r;
  };
  auto phase_start = std::chrono::steady_clock::now();
  auto ptx = check_ptx(read_ptx(work.path), shown_file + " (generated PTX)");
  r.phases.ptx_check = seconds_since(phase_start);
  if (ptx) return refuse(ptx->describe(), ptx->rule);
  if (req.checks_only) {
    r.ok = true;
    return r;
  }
  phase_start = std::chrono::steady_clock::now();
  if (auto no = library_refusal(built, r.source, shown_file, req.is_reference)) return refuse(no->why, no->rule);
  r.phases.library_checks = seconds_since(phase_start);

  // The fast path's manifest: every file the host and the device passes read.
  std::vector<std::string> included = included_files(preprocessed);
  std::optional<Manifest> manifest;
  if (fs::exists(work.path / "kernel.cpp1.ii")) {
    for (auto& f : included_files(read_file(work.path / "kernel.cpp1.ii", "device preprocessed source")))
      included.push_back(std::move(f));
    manifest = make_manifest(r.source, included, kernel_dir, system_dirs());
  }
  cache.record(r.build_key, raw_log, pre_key, manifest);
  // Put in place under a private name, then renamed: concurrent compiles of one key never
  // see a half-written library.
  const fs::path tmp = r.library.string() + ".tmp." + work.path.filename().string();  // unique per build, threads too
  fs::copy_file(built, tmp, fs::copy_options::overwrite_existing);
  fs::rename(tmp, r.library);
  r.ok = true;
  return r;
}


}  // namespace mgk::eval
