#include "eval/evaluate.h"

#include <stdlib.h>

#include <chrono>
#include <random>
#include <sstream>

#include "common/error.h"
#include "common/format.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "eval/compile.h"
#include "eval/launcher.h"
#include "eval/timing.h"
#include "problems/catalog.h"
#include "problems/resolve.h"

namespace mgk::eval {

namespace fs = std::filesystem;

namespace {

// Seeds the candidate cannot predict: drawn from the OS for every trial and timing block.
uint64_t fresh_seed() {
  static std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

nlohmann::json tensor_plan(const problems::ResolvedTensor& t, bool output, int world) {
  nlohmann::json j{{"name", t.name},
                   {"dtype", problems::to_string(t.dtype)},
                   {"shape", t.shape},
                   {"numel", t.numel},
                   {"symmetric", t.symmetric},
                   {"alloc_bytes", t.symmetric ? t.max_bytes_over_ranks : t.numel * problems::dtype_bytes(t.dtype)}};
  if (!output) {
    j["init"] = {{"dist", t.spec->init.dist}, {"a", t.spec->init.a}, {"b", t.spec->init.b}};
  } else {
    const auto& tol = t.spec->tolerance;
    expr::Vars v{{"W", double(world)}};
    switch (tol.kind) {
      case problems::ToleranceKind::kExact: j["check"] = {{"kind", "exact"}}; break;
      case problems::ToleranceKind::kRounding:
        j["check"] = {{"kind", "rounding"},
                      {"factor", expr::evaluate(tol.factor, v)},
                      {"unit_roundoff", problems::unit_roundoff(t.dtype)}};
        break;
      case problems::ToleranceKind::kAllclose:
        j["check"] = {{"kind", "allclose"}, {"atol", tol.atol}, {"rtol", tol.rtol}};
        break;
    }
  }
  return j;
}

nlohmann::json prepare_plan(const problems::Resolved& r) {
  nlohmann::json dims = nlohmann::json::object();
  for (const auto& [k, v] : r.dims) dims[k] = (long long)v;
  nlohmann::json in = nlohmann::json::array(), out = nlohmann::json::array();
  for (const auto& t : r.inputs) in.push_back(tensor_plan(t, false, r.world_size));
  for (const auto& t : r.outputs) out.push_back(tensor_plan(t, true, r.world_size));
  return {{"cmd", "prepare"}, {"plan", {{"dims", dims}, {"inputs", in}, {"outputs", out}}}};
}

std::string first_error_line(const std::string& log) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line))
    if (line.find("error") != std::string::npos) return line;
  return log.substr(0, log.find('\n'));
}

std::vector<int> choose_gpus(const EvalOptions& o, const MachineInfo& m) {
  std::vector<int> gpus = o.gpus;
  if (gpus.empty())
    for (int i = 0; i < o.world_size && i < int(m.gpus.size()); ++i) gpus.push_back(i);
  if (int(gpus.size()) != o.world_size)
    throw UsageError("world size " + std::to_string(o.world_size) + " needs " + std::to_string(o.world_size) +
                     " GPUs, but " + std::to_string(m.gpus.size()) + " are visible" +
                     (o.gpus.empty() ? "" : " / --gpus names " + std::to_string(o.gpus.size())) +
                     " (check CUDA_VISIBLE_DEVICES, or lower --world)");
  for (int g : gpus)
    if (g < 0 || g >= int(m.gpus.size()))
      throw UsageError("GPU " + std::to_string(g) + " does not exist here (visible: 0.." +
                       std::to_string(int(m.gpus.size()) - 1) + ")");
  return gpus;
}

struct TempDir {
  fs::path path;
  bool keep = false;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "mgk-eval-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw Error("cannot create a temporary directory under /tmp");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!keep) fs::remove_all(path, ec);
  }
};

}  // namespace

EvalResult evaluate(const EvalOptions& o) {
  auto t0 = std::chrono::steady_clock::now();
  EvalResult res;
  problems::Spec spec = problems::load(o.problem);
  res.problem = spec.name;
  res.world_size = o.world_size;
  std::vector<std::string> sizes = o.sizes.empty() ? spec.default_sizes : o.sizes;
  for (const auto& s : sizes) problems::resolve(spec, s, o.dtype, o.world_size, 0);  // validates early
  if (!o.kernel_is_reference && !fs::exists(o.kernel))
    throw UsageError("no such kernel file: " + o.kernel.string());

  MachineInfo machine;
  std::string arch = o.arch;
  if (!o.compile_only) {
    machine = probe_machine();
    if (machine.gpus.empty())
      throw Error("no GPU visible (" + (machine.error.empty() ? "none found" : machine.error) +
                  "); use --compile-only to only check that the kernel compiles");
    res.gpus = choose_gpus(o, machine);
    if (arch.empty()) arch = arch_for(machine.gpus[res.gpus[0]].cc);
  }

  CompileRequest ref_req{spec.reference_path(), spec.dir, {}, o.nvcc_flags, arch, true};
  CompileResult ref = compile(ref_req);
  if (!ref.ok)
    throw Error("the reference of " + spec.name + " does not compile (a bug in mgk's suite): " + first_error_line(ref.log));
  CompileResult cand = o.kernel_is_reference ? ref : compile_candidate([&] {
    EvalOptions c = o;
    c.arch = arch;
    return c;
  }());
  res.kernel_hash = cand.key;
  res.compile_log = cand.log;
  res.compile_seconds = cand.seconds;
  res.compile_cached = cand.cached;
  if (!cand.ok) {
    res.verdict = Verdict::kCompileError;
    res.message = cand.policy_violation.empty() ? "does not compile: " + first_error_line(cand.log)
                                                : "refused before compiling: " + cand.policy_violation;
    res.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
  }
  if (o.compile_only) {
    res.verdict = Verdict::kCompiled;
    res.message = cand.cached ? "compiled (cached)" : "compiled in " + fixed(cand.seconds, 1) + " s";
    return res;
  }

  install_interrupt_handler();
  TempDir scratch;
  fs::path work = o.work_dir.empty() ? scratch.path : o.work_dir;
  fs::path cand_lib = cand.library;
  if (o.kernel_is_reference) {  // a second copy, so the two are separate dlopen instances
    cand_lib = work / "candidate.so";
    fs::copy_file(ref.library, cand_lib, fs::copy_options::overwrite_existing);
  }
  double timeout = o.timeout_seconds;
  bool all_correct = true;
  try {
    RankGroup group(harness_path(), res.gpus, work);
    auto id = group.command_one(0, {{"cmd", "nccl_id"}}, "NCCL id", 60);
    group.command({{{"cmd", "init"}, {"nccl_id", id["id"]}}}, "init (CUDA context, NCCL communicator)",
                  std::max(timeout, 120.0));
    group.command({{{"cmd", "load"}, {"reference", ref.library.string()}, {"candidate", cand_lib.string()},
                   {"candidate_is_reference", o.kernel_is_reference}}},
                  "loading the kernels", std::max(timeout, 60.0));
    for (const auto& size : sizes) {
      throw_if_interrupted();
      SizeResult sr;
      sr.size = size;
      std::vector<nlohmann::json> plans;
      for (int r = 0; r < o.world_size; ++r) plans.push_back(prepare_plan(problems::resolve(spec, size, o.dtype, o.world_size, r)));
      group.command(plans, "prepare " + size + " (allocate, mgk_setup)", std::max(timeout, 120.0));
      bool failed = false;
      for (int t = 0; t < o.trials && !failed; ++t) {
        throw_if_interrupted();
        uint64_t seed = fresh_seed();
        std::string tag = " trial " + std::to_string(t + 1) + "/" + std::to_string(o.trials) + " at size " + size;
        for (const char* who : {"candidate", "reference"}) {
          auto replies = group.command({{{"cmd", "trial"}, {"who", who}, {"seed", seed}}}, std::string(who) + tag, timeout);
          for (const auto& rep : replies) {
            if (rep.value("correct", false)) continue;
            std::string why = rep.value("failure", "incorrect");
            if (std::string(who) == "reference")
              throw RankError("the reference failed its own check at size " + size + ": " + why + " " +
                                  rep.value("mismatch", nlohmann::json()).dump() + " (a bug in mgk's problem definition)",
                              "harness", "reference", "reference" + tag);
            sr.failure = why;
            if (rep.contains("mismatch") && !rep["mismatch"].is_null()) sr.mismatch = rep["mismatch"].dump();
            failed = true;
            break;
          }
          if (failed) break;
        }
        if (!failed) ++sr.trials_passed;
      }
      if (!failed && o.back_to_back > 0) {
        throw_if_interrupted();
        const std::string phase = std::to_string(o.back_to_back) + " back-to-back calls at size " + size;
        auto replies = group.command({{{"cmd", "back_to_back"}, {"who", "candidate"}, {"seed", fresh_seed()},
                                       {"calls", o.back_to_back}}},
                                     phase, timeout);
        for (const auto& rep : replies) {
          if (rep.value("correct", false)) continue;
          sr.failure = rep.value("failure", "incorrect in back-to-back calls");
          if (rep.contains("mismatch") && !rep["mismatch"].is_null()) sr.mismatch = rep["mismatch"].dump();
          failed = true;
          break;
        }
      }
      if (!failed && o.time) {
        const int blocks = 5;
        int per_block = std::max(1, (o.timing_iterations + blocks - 1) / blocks);
        std::vector<std::vector<double>> ref_t(o.world_size), cand_t(o.world_size);
        for (int b = 0; b < blocks && !failed; ++b) {
          // Interleaved, alternating which goes first, so drift hits both alike.
          std::vector<std::string> order = (b % 2 == 0) ? std::vector<std::string>{"reference", "candidate"}
                                                        : std::vector<std::string>{"candidate", "reference"};
          for (const auto& who : order) {
            throw_if_interrupted();
            auto replies = group.command({{{"cmd", "time"}, {"who", who}, {"seed", fresh_seed()},
                                           {"warmup", b == 0 ? 10 : 3}, {"iterations", per_block}}},
                                         who + " timing at size " + size, timeout);
            for (int r = 0; r < o.world_size; ++r) {
              const auto& rep = replies[r];
              if (!rep.value("correct", false)) {
                std::string why = rep.value("failure", "incorrect");
                if (who == "reference")
                  throw RankError("the reference failed its check during timing at size " + size + ": " + why, "harness",
                                  "reference", who + " timing");
                sr.failure = why;
                if (rep.contains("mismatch") && !rep["mismatch"].is_null()) sr.mismatch = rep["mismatch"].dump();
                failed = true;
              }
              auto times = rep.value("times_us", std::vector<double>{});
              auto& dst = (who == "reference" ? ref_t : cand_t)[r];
              dst.insert(dst.end(), times.begin(), times.end());
            }
            if (failed) break;
          }
        }
        if (!failed) {
          sr.reference = summarize(ref_t);
          sr.candidate = summarize(cand_t);
          throw_if_interrupted();
          auto replies = group.command({{{"cmd", "time_floor"}, {"warmup", 10}, {"iterations", o.timing_iterations}}},
                                       "timing floor at size " + size, timeout);
          std::vector<std::vector<double>> floor_t;
          for (const auto& rep : replies) floor_t.push_back(rep.value("times_us", std::vector<double>{}));
          sr.floor = summarize(floor_t);
          if (sr.candidate->median_us > 0) sr.speedup = sr.reference->median_us / sr.candidate->median_us;
          if (o.peaks) {
            auto cost = problems::max_cost_over_ranks(spec, size, o.dtype, o.world_size);
            RooflinePoint p = roofline(cost, *o.peaks);
            if (p.us > 0 && sr.candidate->median_us > 0) {
              sr.roofline_us = p.us;
              sr.roofline_bound = p.bound;
              sr.roofline_fraction = p.us / sr.candidate->median_us;
            }
          }
        }
      }
      sr.correct = !failed;
      group.command({{{"cmd", "teardown"}}}, "teardown " + size, std::max(timeout, 60.0));
      res.sizes.push_back(sr);
      if (failed) {
        all_correct = false;
        break;
      }
    }
  } catch (const HangError& e) {
    res.verdict = Verdict::kTimeout;
    res.message = e.what();
    res.phase = e.phase;
    res.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
  } catch (const RankError& e) {
    bool candidate_fault = (e.fault == "solution" && e.who != "reference") ||
                           (e.fault == "died" && e.phase.find("candidate") != std::string::npos);
    res.verdict = candidate_fault ? Verdict::kRuntimeError : Verdict::kInfrastructure;
    res.message = e.what();
    res.phase = e.phase;
    res.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
  }

  res.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!all_correct) {
    const SizeResult& bad = res.sizes.back();
    res.verdict = Verdict::kIncorrect;
    res.message = "incorrect at size " + bad.size + ": " + bad.failure;
    return res;
  }
  res.verdict = Verdict::kCorrect;
  std::string speeds;
  for (const auto& s : res.sizes)
    if (s.candidate) speeds += (speeds.empty() ? "" : ", ") + s.size + " " + fixed(s.speedup, 2) + "x";
  res.message = "correct at " + std::to_string(res.sizes.size()) + " size(s)" +
                (speeds.empty() ? "" : "; speedup over the reference: " + speeds);
  return res;
}

}  // namespace mgk::eval
