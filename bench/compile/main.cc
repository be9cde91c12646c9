// mgk-compile-bench: where a kernel's build goes, against nvcc alone. For each case (a plain
// collective candidate, a plain cuBLAS GEMM candidate, a reference on cuBLASLt through
// mgk/lt_gemm.h), on the CPU, no GPU needed:
//   bare nvcc   the command mgk's build runs (same file, arch, flags, libraries), nothing else
//   mgk cold    `mgk eval PROBLEM FILE --compile-only --no-store` with an empty MGK_HOME
//   mgk hit     the same again (the compile cache's fast path)
// then mgk's cold build in this process (eval::compile, another empty cache) by phase. Every
// number is the median of --repeat runs (default 1). Prints one markdown table.
//
// Usage: mgk-compile-bench [--repeat N] [--mgk PATH]   (run from anywhere; MGK_ROOT is honoured)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/env.h"
#include "common/error.h"
#include "common/format.h"
#include "eval/compile.h"
#include "problems/catalog.h"
#include "process/run.h"

namespace mgk::bench {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string what, problem;
  fs::path file;  // empty: the problem's reference (`mgk eval --reference`)
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct TempHome {
  fs::path path;
  TempHome() {
    std::string t = (fs::temp_directory_path() / "mgk-compile-bench-XXXXXX").string();
    if (!mkdtemp(t.data())) throw Error("cannot make a temporary folder");
    path = t;
  }
  ~TempHome() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

double timed(const std::vector<std::string>& argv, const process::EnvMap& env = {}) {
  const process::ProcessResult p = process::run_tool(argv, std::chrono::minutes(10), {}, env);
  if (p.exit_code != 0) throw Error(argv[0] + " failed: " + p.output.substr(0, 2000));
  return p.wall_seconds;
}

int run(int argc, char** argv) {
  int repeat = 1;
  fs::path mgk = self_dir() / "mgk";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--mgk" && i + 1 < argc) mgk = argv[++i];
    else throw UsageError("usage: mgk-compile-bench [--repeat N] [--mgk PATH]");
  }
  const fs::path root = root_dir();
  const std::vector<Case> cases = {
      {"plain collective (all_reduce)", "collectives/all_reduce", root / "tests/gpu/candidates/all_reduce.cu"},
      {"plain GEMM on cuBLAS (allgather_gemm)", "tp/allgather_gemm", root / "tests/gpu/candidates/tp/allgather_gemm.cu"},
      {"cuBLASLt via mgk/lt_gemm.h (importance_sampling_loss reference)", "losses/importance_sampling_loss", {}}};

  std::printf("| kernel | bare nvcc s | mgk cold s | cold / bare | mgk hit s | lookup s | nvcc -E s (beside) | nvcc s | PTX check s | library checks s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Case& c : cases) {
    const problems::Spec spec = problems::load(c.problem);
    eval::CompileRequest req;
    req.source = c.file.empty() ? spec.reference_path() : c.file;
    req.problem_dir = spec.dir;
    req.is_reference = c.file.empty();
    std::vector<double> bare, cold, hit, lookup, pre, nvcc, ptx, lib;
    for (int r = 0; r < repeat; ++r) {
      {
        TempHome out;
        bare.push_back(timed(eval::nvcc_command(req, out.path / "kernel.so")));
      }
      {
        TempHome home;
        std::vector<std::string> args = {mgk.string(), "eval", c.problem};
        if (c.file.empty()) args.push_back("--reference");
        else args.push_back(c.file.string());
        args.insert(args.end(), {"--compile-only", "--no-store"});
        const process::EnvMap env = {{"MGK_HOME", home.path.string()}};
        cold.push_back(timed(args, env));
        hit.push_back(timed(args, env));
      }
      {
        TempHome home;
        setenv("MGK_HOME", home.path.c_str(), 1);
        const eval::CompileResult b = eval::compile(req);
        unsetenv("MGK_HOME");
        if (!b.ok) throw Error(req.source.string() + " does not build: " + b.log.substr(0, 2000));
        lookup.push_back(b.phases.lookup);
        pre.push_back(b.phases.preprocess);
        nvcc.push_back(b.phases.nvcc);
        ptx.push_back(b.phases.ptx_check);
        lib.push_back(b.phases.library_checks);
      }
    }
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c.what.c_str(), fixed(median(bare), 2).c_str(),
                fixed(median(cold), 2).c_str(), fixed(median(cold) / median(bare), 2).c_str(),
                fixed(median(hit), 3).c_str(), fixed(median(lookup), 3).c_str(), fixed(median(pre), 2).c_str(),
                fixed(median(nvcc), 2).c_str(), fixed(median(ptx), 3).c_str(), fixed(median(lib), 3).c_str());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace mgk::bench

int main(int argc, char** argv) {
  try {
    return mgk::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mgk-compile-bench: error: %s\n", e.what());
    return 1;
  }
}
