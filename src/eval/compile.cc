#include "eval/compile.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <optional>
#include <regex>

#include "common/env.h"
#include "common/error.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/interrupt.h"
#include "eval/elf.h"
#include "eval/executable_code.h"
#include "eval/imports.h"
#include "eval/source_policy.h"
#include "problems/catalog.h"
#include "common/text.h"
#include "process/run.h"
#include "runner/environment.h"

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
process::ProcessResult run_nvcc(const std::vector<std::string>& argv, const fs::path& cwd) {
  process::RunSpec spec;
  spec.argv = argv;
  spec.env = runner::scrubbed_environment(process::current_environment(), {}, cwd, runner::EnvPolicy::kCompiler);
  spec.working_dir = cwd;
  spec.timeout_s = 300;
  spec.limits = process::Limits{0, 0, 0, 0};
  spec.cancel = &interrupt_flag();
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

// Where the trusted headers live: lines from them are not judged.
std::vector<fs::path> trusted_dirs(const fs::path& root) {
  std::vector<fs::path> dirs = {root / "sandbox/include", root / "primitives", "/usr/include", "/usr/lib/gcc",
                                "/usr/local/include", "/usr/local/cuda", "/opt/nvidia"};
  const fs::path nvcc = fs::weakly_canonical(nvcc_path());
  if (nvcc.has_parent_path()) dirs.push_back(nvcc.parent_path().parent_path());  // the toolkit nvcc belongs to
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

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
  if (!out) throw Error("cannot write " + p.string());
}

// nvcc names the staged copy; the user knows the file by the path they gave.
std::string as_given(std::string text, const fs::path& staged, const fs::path& given) {
  const std::string from = staged.string(), to = given.string();
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string read_ptx(const fs::path& dir) {
  std::string all;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".ptx") all += read_file(e.path(), "generated PTX");
  return all;
}

}  // namespace

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

std::vector<std::string> nvcc_flags(const std::string& arch_in) {
  const std::string arch = arch_in.empty() ? "sm_90a" : arch_in;
  const std::string arch_num = arch.substr(3);  // "90a"
  // Candidates and references alike link the CUDA runtime shared: the process's one runtime
  // is used, and a candidate's imports are its own, not the statically linked runtime's.
  return {"-std=c++20", "-O3", "-shared", "-Xcompiler", "-fPIC", "-lineinfo", "--expt-relaxed-constexpr",
          "--extended-lambda", "-cudart", "shared", "-gencode=arch=compute_" + arch_num + ",code=sm_" + arch_num};
}

std::vector<std::string> linked_libraries(bool is_reference) {
  // cuDNN (attention) for the references only: it can deserialise execution plans, compiled
  // device code the candidate checks (imports, PTX) would never see.
  std::vector<std::string> libs = {"-lcublas", "-lcublasLt"};
  if (is_reference) libs.insert(libs.end(), {"-lcudnn", "-lnccl"});
  return libs;
}

CompileResult compile(const CompileRequest& req) {
  install_interrupt_handler();
  CompileResult r;
  auto [source, unreadable] = read_kernel_source(req.source);
  if (!unreadable.empty()) {
    r.unreadable = unreadable;
    r.log = unreadable;
    return r;
  }
  r.source = std::move(source);
  r.kernel_hash = sha256_hex(r.source);

  const fs::path root = root_dir();
  std::vector<std::string> flags = nvcc_flags(req.arch);
  for (const std::string dir : {(root / "sandbox/include").string(), (root / "primitives").string(),
                                fs::absolute(req.source).parent_path().string()})
    flags.push_back("-I" + dir);
  if (!req.problem_dir.empty()) flags.push_back("-I" + req.problem_dir.string());
  for (const auto& d : req.defines) flags.push_back("-D" + d);
  for (const auto& f : req.extra_flags) flags.push_back(f);
  const std::vector<std::string> libs = linked_libraries(req.is_reference);

  // The exact bytes read above are what nvcc sees: a copy, under the name the user knows,
  // at a path that depends only on the bytes (the preprocessor writes it into its output,
  // which the cache key hashes).
  const fs::path cache = home_dir() / "cache";
  WorkDir work(cache / "tmp");
  const fs::path staged = cache / "src" / r.kernel_hash.substr(0, 2) / r.kernel_hash / req.source.filename();
  if (!fs::exists(staged)) {
    fs::create_directories(staged.parent_path());
    const fs::path tmp = work.path / "staged";
    write_bytes(tmp, r.source);
    fs::rename(tmp, staged);
  }

  std::vector<std::string> pre = {nvcc_path(), "-E"};
  pre.insert(pre.end(), flags.begin(), flags.end());
  pre.insert(pre.end(), {staged.string(), "-o", (work.path / "preprocessed.ii").string()});
  process::ProcessResult p = run_nvcc(pre, work.path);
  if (p.cancelled) throw Interrupted();
  if (p.exit_code != 0) {
    r.log = as_given(p.output, staged, req.source);
    r.seconds = p.wall_seconds;
    return r;
  }
  const std::string preprocessed = read_file(work.path / "preprocessed.ii", "preprocessed source");
  if (auto v = check_preprocessed(preprocessed, trusted_dirs(root), req.is_reference)) {
    if (v->file == staged.string()) v->file = req.source.string();
    r.refusal = v->describe();
    r.refused_rule = rule_info(v->rule).id;
    r.log = req.source.string() + ": refused: " + r.refusal;
    return r;
  }

  // The key covers everything the host pass included (the preprocessed text) and the
  // trusted headers whole (their device-only branches do not show in the host pass).
  Sha256 key;
  key.update(preprocessed).update("\0flags:");
  for (const auto& f : flags) key.update(f).update("\0");
  for (const auto& l : libs) key.update(l).update("\0");
  key.update(nvcc_version()).update(tree_digest(root / "sandbox/include")).update(tree_digest(root / "primitives"));
  r.build_key = key.hex();

  const fs::path dir = cache / r.build_key.substr(0, 2) / r.build_key;
  r.library = dir / "kernel.so";
  if (fs::exists(r.library)) {
    r.ok = true;
    r.cached = true;
    r.log = fs::exists(dir / "compile.log") ? read_file(dir / "compile.log", "compile log") : "";
    return r;
  }

  const fs::path built = work.path / "kernel.so";
  std::vector<std::string> argv = {nvcc_path(), "--keep", "--keep-dir", work.path.string()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-o", built.string(), staged.string()});
  argv.insert(argv.end(), libs.begin(), libs.end());
  p = run_nvcc(argv, work.path);
  r.seconds = p.wall_seconds;
  r.log = as_given(p.output, staged, req.source);
  if (p.cancelled) throw Interrupted();
  if (p.timed_out) r.log += "\nnvcc did not finish within 5 minutes";
  if (p.exit_code != 0) return r;

  auto refuse = [&](const std::string& why, std::optional<Rule> rule = std::nullopt) {
    r.refusal = why;
    if (rule) r.refused_rule = rule_info(*rule).id;
    r.log += (r.log.empty() ? "" : "\n") + req.source.string() + ": refused: " + why;
    return r;
  };
  if (auto v = check_ptx(read_ptx(work.path), req.source.filename().string() + " (generated PTX)"))
    return refuse(v->describe(), v->rule);
  const ElfImage elf(built);
  const ElfLinkage linkage = linkage_of(elf);
  if (auto missing = missing_abi_export(linkage))
    return refuse("the library does not export '" + *missing +
                  "' (define it with MGK_EXPORT, i.e. extern \"C\" and default visibility)");
  if (!req.is_reference) {
    if (auto bad = check_imports(linkage)) {
      if (bad->is_library) return refuse("it links " + bad->symbol + ": " + bad->why, bad->rule);
      const std::string name = demangle(bad->symbol);
      // Where the call is, when the text names it: the first call of it outside comments.
      std::string where;
      const std::string base = name.substr(0, name.find('('));
      const std::string ident = base.substr(base.rfind(':') == std::string::npos ? 0 : base.rfind(':') + 1);
      const std::string code = strip_comments(r.source, false);
      std::smatch m;
      const bool plain = !ident.empty() && std::all_of(ident.begin(), ident.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      });
      if (plain && std::regex_search(code, m, std::regex("\\b" + ident + "\\s*\\(")))
        where = req.source.filename().string() + ":" +
                std::to_string(1 + std::count(code.begin(), code.begin() + m.position(0), '\n')) + ": ";
      return refuse(where + "the built library imports '" + name + "': " + bad->why, bad->rule);
    }
    if (auto shadow = shadowed_name(linkage))
      return refuse("the built library defines '" + demangle(shadow->symbol) + "': " + shadow->why, shadow->rule);
    if (auto bad_code = executable_code_violation(elf))
      return refuse("the built library's host code: " + *bad_code + ": " + rule_info(Rule::kHiddenCode).why,
                    Rule::kHiddenCode);
  }

  fs::create_directories(dir);
  std::ofstream(dir / "compile.log") << r.log;
  // Build under a private name, then rename: concurrent compiles of one key never see a
  // half-written library.
  const fs::path tmp = dir / ("kernel.so.tmp." + work.path.filename().string());  // unique per build, threads too
  fs::copy_file(built, tmp, fs::copy_options::overwrite_existing);
  fs::rename(tmp, r.library);
  r.ok = true;
  return r;
}

CompileResult compile_candidate(const EvalOptions& options) {
  problems::Spec spec = problems::load(options.problem);
  CompileRequest req;
  req.source = options.kernel_is_reference ? spec.reference_path() : options.kernel;
  req.problem_dir = spec.dir;
  req.defines = options.defines;
  req.extra_flags = options.nvcc_flags;
  req.arch = options.arch;
  req.is_reference = options.kernel_is_reference;
  return compile(req);
}

}  // namespace mgk::eval
