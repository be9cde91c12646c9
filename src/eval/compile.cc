#include "eval/compile.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>

#include "common/env.h"
#include "common/error.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/subprocess.h"
#include "problems/catalog.h"

namespace mgk::eval {

namespace fs = std::filesystem;

std::string strip_comments(const std::string& s, bool keep_strings) {
  std::string out;
  out.reserve(s.size());
  enum { kCode, kLine, kBlock, kStr, kChr } st = kCode;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i], n = i + 1 < s.size() ? s[i + 1] : '\0';
    switch (st) {
      case kCode:
        if (c == '/' && n == '/') st = kLine, ++i;
        else if (c == '/' && n == '*') st = kBlock, ++i;
        else if (c == '"') st = kStr, out += keep_strings ? c : ' ';
        else if (c == '\'') st = kChr, out += keep_strings ? c : ' ';
        else out += c;
        break;
      case kLine:
        if (c == '\n') st = kCode, out += '\n';
        break;
      case kBlock:
        if (c == '*' && n == '/') st = kCode, ++i, out += ' ';
        else if (c == '\n') out += '\n';
        break;
      case kStr:
      case kChr:
        if (keep_strings) out += c;
        if (c == '\\') {
          if (keep_strings && i + 1 < s.size()) out += s[i + 1];
          ++i;
        } else if ((st == kStr && c == '"') || (st == kChr && c == '\'')) {
          st = kCode;
        }
        break;
    }
  }
  return out;
}

namespace {

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

std::string nvcc_version() {
  static std::once_flag once;
  static std::string v;
  std::call_once(once, [] {
    try {
      v = run_process({nvcc_path(), "--version"}, std::chrono::seconds(30)).output;
    } catch (const Error&) {
      v = "";
    }
  });
  return v;
}

}  // namespace

std::string nvcc_path() {
  if (auto p = env("MGK_NVCC")) return *p;
  if (auto home = env("CUDA_HOME"); home && fs::exists(fs::path(*home) / "bin/nvcc"))
    return (fs::path(*home) / "bin/nvcc").string();
  if (fs::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return "nvcc";
}

std::string policy_violation(const std::string& source, bool is_reference) {
  const std::string code_only = strip_comments(source, false);
  const std::string code_and_strings = strip_comments(source, true);
  struct Rule {
    const char* pattern;
    const char* why;
    bool applies_to_references;
    bool look_in_strings;  // inline PTX is a string
  };
  static const Rule rules[] = {
      {R"(multimem\.|cuMulticast|NVLS)", "NVLink multicast (multimem PTX, cuMulticast*) is off on these machines and must stay off", true, true},
      {R"(\bnccl\w*)", "candidates may not call NCCL: the task is to replace it", false, false},
      {R"(\bdl(open|sym|mopen)\b)", "candidates may not load other code at run time", false, false},
      {R"(\bmgk_oracle\b)", "candidates may not define or call the oracle", false, false},
      {R"(\bcudaDeviceReset\b)", "resetting the device destroys the harness's state", true, false},
  };
  for (const auto& r : rules) {
    if (is_reference && !r.applies_to_references) continue;
    const std::string& code = r.look_in_strings ? code_and_strings : code_only;
    std::smatch m;
    if (std::regex_search(code, m, std::regex(r.pattern, std::regex::icase))) {
      size_t line = 1 + std::count(code.begin(), code.begin() + m.position(0), '\n');
      return "line " + std::to_string(line) + ": '" + m.str(0) + "': " + r.why;
    }
  }
  return "";
}

CompileResult compile(const CompileRequest& req) {
  CompileResult r;
  std::string source = read_file(req.source, "kernel file", ExitCode::kUsage);
  r.policy_violation = policy_violation(source, req.is_reference);
  if (!r.policy_violation.empty()) {
    r.log = req.source.string() + ": refused: " + r.policy_violation;
    return r;
  }
  std::string arch = req.arch.empty() ? "sm_90a" : req.arch;
  std::string arch_num = arch.substr(3);  // "90a"
  fs::path root = root_dir();
  std::vector<std::string> flags = {"-std=c++20", "-O3", "-shared", "-Xcompiler", "-fPIC", "-lineinfo",
                                    "--expt-relaxed-constexpr", "--extended-lambda",
                                    "-gencode=arch=compute_" + arch_num + ",code=sm_" + arch_num,
                                    "-I" + (root / "sandbox/include").string(), "-I" + (root / "primitives").string()};
  if (!req.problem_dir.empty()) flags.push_back("-I" + req.problem_dir.string());
  for (const auto& d : req.defines) flags.push_back("-D" + d);
  for (const auto& f : req.extra_flags) flags.push_back(f);
  std::vector<std::string> libs = {"-lcublas"};
  if (req.is_reference) libs.push_back("-lnccl");

  Sha256 key;
  key.update(source).update("\0flags:");
  for (const auto& f : flags) key.update(f).update("\0");
  for (const auto& l : libs) key.update(l).update("\0");
  key.update(nvcc_version()).update(tree_digest(root / "sandbox/include")).update(tree_digest(root / "primitives"));
  r.key = key.hex();

  fs::path dir = home_dir() / "cache" / r.key.substr(0, 2) / r.key;
  r.library = dir / "kernel.so";
  if (fs::exists(r.library)) {
    r.ok = true;
    r.cached = true;
    r.log = fs::exists(dir / "compile.log") ? read_file(dir / "compile.log", "compile log") : "";
    return r;
  }
  fs::create_directories(dir);
  // Build under a private name, then rename: concurrent compiles of one key (other
  // processes, or other threads of a bench) never see a half-written library.
  static std::atomic<unsigned> builds{0};
  fs::path tmp = dir / ("kernel.so.tmp." + std::to_string(getpid()) + "." + std::to_string(builds++));
  std::vector<std::string> argv = {nvcc_path()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("-o");
  argv.push_back(tmp.string());
  argv.push_back(req.source.string());
  argv.insert(argv.end(), libs.begin(), libs.end());
  ProcessResult p = run_process(argv, std::chrono::minutes(5));
  r.seconds = p.seconds;
  r.log = p.output;
  if (p.timed_out) r.log += "\nnvcc did not finish within 5 minutes";
  if (p.exit_code != 0) {
    fs::remove(tmp);
    return r;
  }
  std::ofstream(dir / "compile.log") << r.log;
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
