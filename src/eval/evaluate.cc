#include "eval/evaluate.h"

#include <stdlib.h>

#include <chrono>
#include <random>
#include <set>
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
  if (int(gpus.size()) != o.world_size) {
    std::string all_on_gpu0 = "0";
    for (int r = 1; r < o.world_size; ++r) all_on_gpu0 += ",0";
    throw UsageError("world size " + std::to_string(o.world_size) + " needs " + std::to_string(o.world_size) +
                     " GPUs, but " + std::to_string(m.gpus.size()) + " are visible" +
                     (o.gpus.empty() ? "" : " / --gpus names " + std::to_string(o.gpus.size())) +
                     " (check CUDA_VISIBLE_DEVICES, lower --world, or to check correctness only, let ranks share a "
                     "GPU: --gpus " + all_on_gpu0 + ")");
  }
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

// The first failure a rank reports for the candidate, copied into sr; false if none did.
bool take_failure(const std::vector<nlohmann::json>& replies, const std::string& fallback, SizeResult& sr) {
  for (const auto& rep : replies) {
    if (rep.value("correct", false)) continue;
    sr.failure = rep.value("failure", fallback);
    if (rep.contains("mismatch") && !rep["mismatch"].is_null()) sr.mismatch = rep["mismatch"].dump();
    return true;
  }
  return false;
}

// The reference failing its own check says nothing of the candidate: it is mgk's bug.
void require_reference_correct(const std::vector<nlohmann::json>& replies, const std::string& phase) {
  for (const auto& rep : replies)
    if (!rep.value("correct", false))
      throw RankError("the reference failed its own check (" + phase + "): " + rep.value("failure", "incorrect") +
                          " " + rep.value("mismatch", nlohmann::json()).dump() + " (a bug in mgk's problem definition)",
                      "harness", "reference", phase);
}

// Correctness trials on fresh inputs (the reference too, unless it cannot run here); false
// when the candidate failed one.
bool run_trials(RankGroup& group, const EvalOptions& o, const std::string& size, bool with_reference, SizeResult& sr) {
  for (int t = 0; t < o.trials; ++t) {
    throw_if_interrupted();
    const uint64_t seed = fresh_seed();
    const std::string tag = " trial " + std::to_string(t + 1) + "/" + std::to_string(o.trials) + " at size " + size;
    auto replies = group.command({{{"cmd", "trial"}, {"who", "candidate"}, {"seed", seed}}}, "candidate" + tag,
                                 o.timeout_seconds);
    if (take_failure(replies, "incorrect", sr)) return false;
    if (with_reference)
      require_reference_correct(group.command({{{"cmd", "trial"}, {"who", "reference"}, {"seed", seed}}},
                                              "reference" + tag, o.timeout_seconds),
                                "reference" + tag);
    ++sr.trials_passed;
  }
  return true;
}

// Calls in a row with no barrier between them, each checked; false when one was wrong.
bool run_back_to_back(RankGroup& group, const EvalOptions& o, const std::string& size, SizeResult& sr) {
  if (o.back_to_back <= 0) return true;
  throw_if_interrupted();
  auto replies = group.command(
      {{{"cmd", "back_to_back"}, {"who", "candidate"}, {"seed", fresh_seed()}, {"calls", o.back_to_back}}},
      std::to_string(o.back_to_back) + " back-to-back calls at size " + size, o.timeout_seconds);
  return !take_failure(replies, "incorrect in back-to-back calls", sr);
}

// Reference and candidate timed in interleaved blocks (alternating which goes first, so
// drift hits both alike), each timed output checked too; then the floor and the roofline.
// False when the candidate failed a check.
bool run_timing(RankGroup& group, const EvalOptions& o, const problems::Spec& spec, const std::string& size,
                SizeResult& sr) {
  const int blocks = 5;
  const int per_block = std::max(1, (o.timing_iterations + blocks - 1) / blocks);
  std::vector<std::vector<double>> ref_t(o.world_size), cand_t(o.world_size);
  for (int b = 0; b < blocks; ++b) {
    for (const std::string who : {b % 2 ? "candidate" : "reference", b % 2 ? "reference" : "candidate"}) {
      throw_if_interrupted();
      const std::string phase = who + " timing at size " + size;
      auto replies = group.command({{{"cmd", "time"}, {"who", who}, {"seed", fresh_seed()},
                                     {"warmup", b == 0 ? 10 : 3}, {"iterations", per_block}}},
                                   phase, o.timeout_seconds);
      if (who == "reference") require_reference_correct(replies, phase);
      else if (take_failure(replies, "incorrect during timing", sr)) return false;
      for (int r = 0; r < o.world_size; ++r) {
        auto times = replies[r].value("times_us", std::vector<double>{});
        auto& dst = (who == "reference" ? ref_t : cand_t)[r];
        dst.insert(dst.end(), times.begin(), times.end());
      }
    }
  }
  sr.reference = summarize(ref_t);
  sr.candidate = summarize(cand_t);
  throw_if_interrupted();
  auto replies = group.command({{{"cmd", "time_floor"}, {"warmup", 10}, {"iterations", o.timing_iterations}}},
                               "timing floor at size " + size, o.timeout_seconds);
  std::vector<std::vector<double>> floor_t;
  for (const auto& rep : replies) floor_t.push_back(rep.value("times_us", std::vector<double>{}));
  sr.floor = summarize(floor_t);
  if (sr.candidate->median_us > 0) sr.speedup = sr.reference->median_us / sr.candidate->median_us;
  if (o.peaks) {
    RooflinePoint p = roofline(problems::max_cost_over_ranks(spec, size, o.dtype, o.world_size), *o.peaks);
    if (p.us > 0 && sr.candidate->median_us > 0) {
      sr.roofline_us = p.us;
      sr.roofline_bound = p.bound;
      sr.roofline_fraction = p.us / sr.candidate->median_us;
    }
  }
  return true;
}

}  // namespace

bool ranks_share_gpu(const std::vector<int>& gpus) {
  return std::set<int>(gpus.begin(), gpus.end()).size() < gpus.size();
}

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
  const bool shared = ranks_share_gpu(res.gpus);
  if (shared && o.kernel_is_reference)
    throw UsageError("the NCCL reference cannot run with ranks sharing a GPU (NCCL refuses it): give each rank "
                     "its own GPU");

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
  const double timeout = o.timeout_seconds;
  try {
    RankGroup group(harness_path(), res.gpus, work);
    if (shared) {  // NCCL refuses two ranks on one GPU, and the reference is not run
      group.command({{{"cmd", "init"}}}, "init (CUDA context)", std::max(timeout, 120.0));
    } else {
      auto id = group.command_one(0, {{"cmd", "nccl_id"}}, "NCCL id", 60);
      group.command({{{"cmd", "init"}, {"nccl_id", id["id"]}}}, "init (CUDA context, NCCL communicator)",
                    std::max(timeout, 120.0));
    }
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
      sr.correct = run_trials(group, o, size, !shared, sr) && run_back_to_back(group, o, size, sr) &&
                   (!o.time || shared || run_timing(group, o, spec, size, sr));
      group.command({{{"cmd", "teardown"}}}, "teardown " + size, std::max(timeout, 60.0));
      res.sizes.push_back(sr);
      if (!sr.correct) break;
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
  if (!res.sizes.empty() && !res.sizes.back().correct) {  // the loop stops at the first failing size
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
                (speeds.empty() ? "" : "; speedup over the reference: " + speeds) +
                (shared ? "; not timed: ranks share a GPU (time-sliced), so only correctness was checked" : "");
  return res;
}

}  // namespace mgk::eval
