#include "eval/evaluate.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "common/error.h"
#include "common/format.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "eval/compile.h"
#include "eval/provenance.h"
#include "eval/launcher.h"
#include "eval/plan.h"
#include "eval/timed_checks.h"
#include "eval/timing.h"

namespace mgk::eval {

namespace fs = std::filesystem;
using wire::Who;

namespace {

// Seeds the candidate cannot predict: drawn from the OS for every trial and timing block.
uint64_t fresh_seed() {
  static std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

std::string first_error_line(const std::string& log) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line))
    if (line.find("error") != std::string::npos) return line;
  return log.substr(0, log.find('\n'));
}

std::vector<int> choose_gpus(const EvalOptions& o, const MachineInfo& m) {
  const int world = o.plan.world_size;
  std::vector<int> gpus = o.gpus;
  if (gpus.empty())
    for (int i = 0; i < world && i < int(m.gpus.size()); ++i) gpus.push_back(i);
  if (int(gpus.size()) != world) {
    std::string all_on_gpu0 = "0";
    for (int r = 1; r < world; ++r) all_on_gpu0 += ",0";
    throw UsageError("world size " + std::to_string(world) + " needs " + std::to_string(world) +
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
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "mgk-eval-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw Error("cannot create a temporary directory under /tmp");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Everything one size's checks need, in one place.
struct SizeRun {
  RankGroup& group;
  const EvalOptions& o;
  const SizePlan& plan;
  results::SizeResult& sr;
  double protocol_spread_us;  // the outside clock's probes (0 when there were none)
  void progress(const std::string& what) const {
    if (o.progress) o.progress("size " + plan.size + ": " + what);
  }
};

// The verdict a trial's, a back-to-back block's or a timed block's reply carries.
const wire::Verdict& verdict_of(const wire::Reply& r) {
  if (const auto* t = std::get_if<wire::TimedCalls>(&r.answer)) return t->verdict;
  return r.as<wire::Judged>().verdict;
}

// The first failure a rank reports for the candidate, copied into sr; false if none did.
bool take_failure(const std::vector<wire::Reply>& replies, results::SizeResult& sr) {
  for (const auto& rep : replies) {
    const wire::Verdict& v = verdict_of(rep);
    if (v.correct) continue;
    sr.failure = v.failure;
    sr.failure_kind = wire::to_string(v.kind);
    sr.mismatch = v.mismatch;
    return true;
  }
  return false;
}

// The largest error ratio any rank's check saw, folded into `worst`.
void fold_worst_ratio(const std::vector<wire::Reply>& replies, double& worst) {
  for (const auto& rep : replies) worst = std::max(worst, verdict_of(rep).worst_ratio);
}

// The reference failing its own check says nothing of the candidate: it is mgk's bug.
void require_reference_correct(const std::vector<wire::Reply>& replies, const std::string& phase) {
  for (const auto& rep : replies)
    if (const wire::Verdict& v = verdict_of(rep); !v.correct)
      throw RankError("the reference failed its own check (" + phase + "): " + v.failure + " " +
                          (v.mismatch ? wire::to_json(*v.mismatch).dump() : "") + " (a bug in mgk's problem definition)",
                      RankFault::kHarness, Who::kReference, phase);
}

std::vector<wire::Command> per_rank_prepare(const SizePlan& plan) {
  std::vector<wire::Command> c;
  for (const auto& r : plan.ranks) c.push_back(wire::Prepare{r});
  return c;
}

// Correctness trials on fresh inputs (the reference too, unless it cannot run here); false
// when the candidate failed one.
bool run_trials(const SizeRun& s, bool with_reference) {
  for (int t = 0; t < s.o.trials; ++t) {
    throw_if_interrupted();
    const uint64_t seed = fresh_seed();
    const std::string tag = " trial " + std::to_string(t + 1) + "/" + std::to_string(s.o.trials) + " at size " + s.plan.size;
    s.progress("trial " + std::to_string(t + 1) + "/" + std::to_string(s.o.trials));
    auto replies = s.group.command({wire::Trial{Who::kCandidate, seed}}, "candidate" + tag, s.o.timeout_seconds);
    fold_worst_ratio(replies, s.sr.worst_error_ratio);
    if (take_failure(replies, s.sr)) return false;
    if (with_reference) {
      auto ref = s.group.command({wire::Trial{Who::kReference, seed}}, "reference" + tag, s.o.timeout_seconds);
      fold_worst_ratio(ref, s.sr.reference_worst_error_ratio);
      require_reference_correct(ref, "reference" + tag);
    }
    ++s.sr.trials_passed;
  }
  return true;
}

// Calls in a row with no barrier between them, each checked; false when one was wrong.
bool run_back_to_back(const SizeRun& s) {
  if (s.o.back_to_back <= 0) return true;
  throw_if_interrupted();
  s.progress(std::to_string(s.o.back_to_back) + " back-to-back calls");
  auto replies = s.group.command({wire::BackToBack{Who::kCandidate, fresh_seed(), s.o.back_to_back}},
                                 std::to_string(s.o.back_to_back) + " back-to-back calls at size " + s.plan.size,
                                 s.o.timeout_seconds);
  fold_worst_ratio(replies, s.sr.worst_error_ratio);
  return !take_failure(replies, s.sr);
}

// Reference and candidate timed in interleaved blocks (alternating which goes first, so
// drift hits both alike); in each block a fresh subset of the calls is judged; then the
// floor, the credibility of the candidate's time, and the roofline. False when the
// candidate failed a check.
bool run_timing(const SizeRun& s) {
  static std::mt19937_64 rng{std::random_device{}()};
  const int blocks = 5;
  const int per_block = std::max(1, (s.o.timing_iterations + blocks - 1) / blocks);
  const int world = s.group.world();
  std::vector<std::vector<double>> ref_t(world), cand_t(world), outside_t(world);
  for (int b = 0; b < blocks; ++b) {
    for (const Who who : {b % 2 ? Who::kCandidate : Who::kReference, b % 2 ? Who::kReference : Who::kCandidate}) {
      throw_if_interrupted();
      const std::string phase = std::string(wire::to_string(who)) + " timing at size " + s.plan.size;
      s.progress(std::string(wire::to_string(who)) + " timing, block " + std::to_string(b + 1) + "/" +
                 std::to_string(blocks));
      const int warmup = b == 0 ? 10 : 3;
      wire::Time t{who, fresh_seed(), warmup, per_block, draw_checked_calls(warmup + per_block, s.o.timed_checks, rng)};
      auto replies = s.group.command({t}, phase, s.o.timeout_seconds);
      fold_worst_ratio(replies, who == Who::kReference ? s.sr.reference_worst_error_ratio : s.sr.worst_error_ratio);
      if (who == Who::kReference) {
        require_reference_correct(replies, phase);
      } else {
        if (take_failure(replies, s.sr)) return false;
        s.sr.timed_calls_checked += replies[0].as<wire::TimedCalls>().checked;
      }
      for (int r = 0; r < world; ++r) {
        const auto& timed = replies[r].as<wire::TimedCalls>();
        auto& dst = (who == Who::kReference ? ref_t : cand_t)[r];
        dst.insert(dst.end(), timed.times_us.begin(), timed.times_us.end());
        outside_t[r].insert(outside_t[r].end(), timed.outside_us.begin(), timed.outside_us.end());
      }
    }
  }
  s.sr.reference = summarize(ref_t);
  s.sr.candidate = summarize(cand_t);
  throw_if_interrupted();
  s.progress("timing floor");
  auto replies = s.group.command({wire::TimeFloor{10, s.o.timing_iterations}}, "timing floor at size " + s.plan.size,
                                 s.o.timeout_seconds);
  std::vector<std::vector<double>> floor_t;
  for (const auto& rep : replies) floor_t.push_back(rep.as<wire::FloorTimes>().times_us);
  s.sr.floor = summarize(floor_t);
  if (!outside_t[0].empty()) s.sr.outside = summarize(outside_t);
  const Credibility c = judge_credibility(*s.sr.candidate, *s.sr.floor, s.sr.outside, s.protocol_spread_us);
  s.sr.credible = c.credible;
  s.sr.not_credible = c.why;
  if (s.sr.credible && s.sr.candidate->median_us > 0) s.sr.speedup = s.sr.reference->median_us / s.sr.candidate->median_us;
  s.sr.link_bytes = s.plan.max_cost.link_bytes;
  if (s.o.peaks && s.sr.credible) {
    RooflinePoint p = roofline(s.plan.max_cost, *s.o.peaks);
    if (p.us > 0 && s.sr.candidate->median_us > 0) {
      s.sr.roofline_us = p.us;
      s.sr.roofline_bound = p.bound;
      s.sr.roofline_fraction = p.us / s.sr.candidate->median_us;
    }
  }
  return true;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// "incorrect at size tiny: output mismatch; incorrect too at odd; correct at small" when a
// size failed (the sizes that passed are named only where --keep-going checked them).
std::optional<std::string> failed_sizes_message(const std::vector<results::SizeResult>& sizes, bool keep_going) {
  const results::SizeResult* first = nullptr;
  std::vector<std::string> more, passed;
  for (const auto& s : sizes) {
    if (s.correct) passed.push_back(s.size);
    else if (!first) first = &s;
    else more.push_back(s.size);
  }
  if (!first) return std::nullopt;
  std::string m = "incorrect at size " + first->size + ": " + first->failure;
  if (!more.empty()) m += "; incorrect too at " + join(more);
  if (keep_going && !passed.empty()) m += "; correct at " + join(passed);
  return m;
}

// A hang or a rank's failure ends the evaluation with its own verdict, unless a size had
// already failed (--keep-going went on past it): the kernel is incorrect all the same, as it
// would have been without the flag, and what ended the run is said after that.
void end_early(results::EvalResult& res, results::Verdict verdict, const std::string& what, const std::string& phase, bool keep_going) {
  res.phase = phase;
  if (auto failed = failed_sizes_message(res.sizes, keep_going)) {
    res.verdict = results::Verdict::kIncorrect;
    res.message = *failed + "; then: " + what;
  } else {
    res.verdict = verdict;
    res.message = what;
  }
}

// What one group of ranks needs: the kernels to load and where its ranks keep their files.
struct GroupInputs {
  const EvalOptions& o;
  const MachineInfo& machine;
  fs::path work;
  fs::path ref_lib, cand_lib;
};

// Starts ranks over `gpus`, loads both kernels and runs each size of `sizes` (checks, and
// timing where `timed`), appending each to `out` and stopping at the first failure unless
// --keep-going. `code_ran` turns true once the candidate's library is loaded. Throws what
// the group throws (HangError, RankError).
void run_group(const GroupInputs& in, const std::vector<int>& gpus, const std::vector<SizePlan>& sizes, bool timed,
               const std::function<void(const std::string&)>& progress, results::EvalResult& res, std::vector<results::SizeResult>& out,
               bool& code_ran) {
  const EvalOptions& o = in.o;
  const double timeout = o.timeout_seconds;
  const bool shared = ranks_share_gpu(gpus);
  GroupSpec gs{harness_path(), std::nullopt, gpus, in.work, {}};
  if (!o.kernel_is_reference) {
    gs.candidate = candidate_path();
    gs.candidate_reads = {in.cand_lib.parent_path()};
    for (int g : gpus) gs.gpu_ids.push_back({in.machine.gpus[g].uuid, in.machine.gpus[g].device_node});
  }
  progress("starting " + std::to_string(gpus.size()) + " ranks");
  RankGroup group(gs);
  res.isolation = gs.candidate ? sandboxing::to_string(group.candidate_isolation()) : "";
  std::vector<wire::Reply> inits;
  if (shared) {  // NCCL refuses two ranks on one GPU, and the reference is not run
    inits = group.command({wire::Init{}}, "init (CUDA context)", std::max(timeout, 120.0));
  } else {
    wire::Reply id = group.command_one(0, wire::NcclId{}, "NCCL id", 60);
    inits = group.command({wire::Init{id.as<wire::NcclIdMade>().nccl_id, timed}}, "init (CUDA context, NCCL communicator)",
                          std::max(timeout, 120.0));
  }
  // One guard for all ranks as a rule (one kernel, one binary); a rank whose guard failed is
  // the one to report.
  for (const auto& r : inits) {
    const std::string& guard = r.as<wire::Started>().write_guard;
    if (res.write_guard.empty() || guard.rfind("not enforced", 0) == 0) res.write_guard = guard;
  }
  code_ran = true;  // loading runs its static initialisers
  for (const auto& r : group.command({wire::Load{in.ref_lib.string(), in.cand_lib.string(), o.kernel_is_reference}},
                                     "loading the kernels", std::max(timeout, 60.0))) {
    const auto& loaded = r.as<wire::Loaded>();
    res.protocol_overhead_us = std::max(res.protocol_overhead_us, loaded.protocol_overhead_us);
    res.protocol_spread_us = std::max(res.protocol_spread_us, loaded.protocol_spread_us);
  }
  EvalOptions so = o;  // the sizes' progress lines go through this group's prefix
  so.progress = progress;
  bool failed_before = false;  // --keep-going: a later size is checked, not timed
  for (const auto& size_plan : sizes) {
    throw_if_interrupted();
    results::SizeResult sr;
    sr.size = size_plan.size;
    SizeRun run{group, so, size_plan, sr, res.protocol_spread_us};
    run.progress("allocating, mgk_setup");
    group.command(per_rank_prepare(size_plan), "prepare " + size_plan.size + " (allocate, mgk_setup)",
                  std::max(timeout, 120.0));
    sr.correct = run_trials(run, !shared) && run_back_to_back(run) && (!timed || failed_before || run_timing(run));
    group.command({wire::Teardown{}}, "teardown " + size_plan.size, std::max(timeout, 60.0));
    out.push_back(sr);
    failed_before = failed_before || !sr.correct;
    if (!sr.correct && !o.keep_going) break;
  }
}

// The structure check's GPUs: the evaluation's, dealt round-robin to `world` ranks.
std::vector<int> structure_gpus(const std::vector<int>& gpus, int world) {
  std::vector<int> out;
  for (int r = 0; r < world; ++r) out.push_back(gpus[r % gpus.size()]);
  return out;
}

}  // namespace

bool ranks_share_gpu(const std::vector<int>& gpus) {
  return std::set<int>(gpus.begin(), gpus.end()).size() < gpus.size();
}

results::EvalResult evaluate(const EvalOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  install_interrupt_handler();
  auto progress = [&](const std::string& what) {
    if (o.progress) o.progress(what);
  };
  results::EvalResult res;
  const EvalPlan& plan = o.plan;
  const problems::Spec& spec = plan.spec;
  res.problem = spec.name;
  res.world_size = plan.world_size;
  if (!o.kernel_is_reference && !fs::exists(o.kernel)) throw UsageError("no such kernel file: " + o.kernel.string());

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

  res.provenance = evaluation_provenance(o.compile_only ? nullptr : &machine, res.gpus, arch.empty() ? "sm_90a" : arch,
                                         o.peaks.has_value());
  // Under --compile-only nothing runs, so no reference is needed (unless it is the kernel).
  CompileResult ref;
  if (!o.compile_only || o.kernel_is_reference) {
    progress("compiling the reference");
    CompileRequest ref_req{spec.reference_path(), spec.dir, {}, o.nvcc_flags, arch, true, ""};
    ref = compile(ref_req);
    if (!ref.ok)
      throw Error("the reference of " + spec.name + " does not compile (a bug in mgk's suite): " +
                  (ref.refusal.empty() ? first_error_line(ref.log) : ref.refusal));
  }
  progress("compiling the candidate");
  CompileResult cand = o.kernel_is_reference ? ref : compile_candidate([&] {
    EvalOptions c = o;
    c.arch = arch;
    return c;
  }());
  res.source = cand.source;
  res.kernel_hash = cand.kernel_hash;
  res.build_key = cand.build_key;
  res.compile_log = cand.log;
  res.compile_seconds = cand.seconds;
  res.compile_cached = cand.cached;
  res.refused = !cand.refusal.empty();
  res.refused_rule = cand.refused_rule;
  if (!cand.ok) {
    res.verdict = results::Verdict::kCompileError;
    res.message = !cand.unreadable.empty() ? "not a kernel source: " + cand.unreadable
                  : !cand.refusal.empty()  ? "refused: " + cand.refusal
                                           : "does not compile: " + first_error_line(cand.log);
    res.wall_seconds = seconds_since(t0);
    return res;
  }
  if (o.compile_only) {
    res.verdict = results::Verdict::kCompiled;
    res.not_timed = "--compile-only";
    res.message = (cand.cached ? std::string("found in the compile cache") : "built in " + fixed(cand.seconds, 1) + " s") +
                  ", not run (--compile-only)";
    return res;
  }
  res.timed = o.time && !shared;
  if (shared) res.not_timed = "ranks share a GPU (time-sliced), so only correctness was checked";
  else if (!o.time) res.not_timed = "--no-time: correctness only";

  TempDir scratch;
  const fs::path work = o.work_dir.empty() ? scratch.path : o.work_dir;
  fs::path cand_lib = cand.library;
  if (o.kernel_is_reference) {  // a second copy, so the two are separate dlopen instances
    cand_lib = work / "candidate.so";
    fs::create_directories(work);
    fs::copy_file(ref.library, cand_lib, fs::copy_options::overwrite_existing);
  }
  // Until the candidate's library is loaded nothing of its code has run: a rank failing or
  // hanging before then (a GPU too full for another CUDA context, NCCL) is the machine's or
  // mgk's, and must not be scored against the kernel.
  bool candidate_code_ran = false;
  std::string stage;  // "" for the evaluation's own world; the structure check's "at W = N ..."
  auto ended_early = [&](results::Verdict once_loaded, const std::string& what, const std::string& phase) {
    const std::string said = stage.empty() ? what : stage + ": " + what;
    if (candidate_code_ran) end_early(res, once_loaded, said, phase, o.keep_going);
    else end_early(res, results::Verdict::kInfrastructure,
                   said + " (before the candidate's code was loaded: the machine or mgk failed, not the kernel)",
                   phase, o.keep_going);
    res.wall_seconds = seconds_since(t0);
    return res;
  };
  const GroupInputs group_inputs{o, machine, work, ref.library, cand_lib};
  try {
    run_group(group_inputs, res.gpus, plan.sizes, res.timed, progress, res, res.sizes, candidate_code_ran);
    // Worlds where the problem's structure exists, if this one lacks it: checked, not timed.
    const bool all_passed = !failed_sizes_message(res.sizes, o.keep_going);
    for (const StructurePlan& at_world : plan.structure) {
      if (!all_passed) break;
      const int world = at_world.world;
      res.structure_checks.push_back({world, structure_gpus(res.gpus, world), {}});
      results::StructureCheckResult& check = res.structure_checks.back();
      const std::vector<results::SizeResult>& checked = check.sizes;
      stage = "at W = " + std::to_string(world) + " (the structure check, ranks sharing GPUs)";
      candidate_code_ran = false;
      const std::string prefix = "structure check at W = " + std::to_string(world) + ": ";
      auto check_progress = [&](const std::string& what) { progress(prefix + what); };
      results::EvalResult untimed_group;  // its protocol figures are not the timed group's
      run_group({o, machine, work / ("world-" + std::to_string(world)), ref.library, cand_lib}, check.gpus,
                at_world.sizes, false, check_progress, untimed_group, check.sizes, candidate_code_ran);
      const auto failed = std::find_if(checked.begin(), checked.end(), [](const results::SizeResult& s) { return !s.correct; });
      if (failed != checked.end()) {
        res.wall_seconds = seconds_since(t0);
        res.verdict = results::Verdict::kIncorrect;
        res.message = "incorrect " + stage + " at size " + failed->size + ": " + failed->failure + " (correct at W = " +
                      std::to_string(plan.world_size) + "; checked at W = " + std::to_string(world) + " because " +
                      spec.structure_check.why + ")";
        return res;
      }
    }
    stage.clear();
  } catch (const HangError& e) {
    return ended_early(results::Verdict::kTimeout, e.what(), e.phase);
  } catch (const RankError& e) {
    const bool candidate_fault = e.who == Who::kCandidate && e.fault != RankFault::kHarness;
    if (candidate_fault && candidate_code_ran) res.refused = e.refused, res.refused_rule = e.refused_rule;
    return ended_early(candidate_fault ? results::Verdict::kRuntimeError : results::Verdict::kInfrastructure, e.what(), e.phase);
  }

  res.wall_seconds = seconds_since(t0);
  if (auto failed = failed_sizes_message(res.sizes, o.keep_going)) {
    res.verdict = results::Verdict::kIncorrect;
    res.message = *failed;
    return res;
  }
  res.verdict = results::Verdict::kCorrect;
  std::string speeds, suspicious;
  for (const auto& s : res.sizes) {
    if (!s.candidate) continue;
    if (!s.credible) suspicious += (suspicious.empty() ? "" : "; ") + s.size + ": " + s.not_credible;
    else speeds += (speeds.empty() ? "" : ", ") + s.size + " " + fixed(s.speedup, 2) + "x";
  }
  res.message = "correct at " + std::to_string(res.sizes.size()) + " size(s)" +
                (speeds.empty() ? "" : "; speedup over the reference: " + speeds) +
                (suspicious.empty() ? "" : "; NOT CREDIBLE, so no speedup is reported (at " + suspicious + ")") +
                (res.not_timed.empty() ? "" : "; not timed: " + res.not_timed);
  for (const auto& c : res.structure_checks)
    res.message += "; correct too at W = " + std::to_string(c.world) + " (the structure check, " +
                   std::to_string(c.sizes.size()) + " size(s), not timed)";
  return res;
}

CompileResult compile_candidate(const EvalOptions& options) {
  const problems::Spec& spec = options.plan.spec;
  CompileRequest req;
  req.source = options.kernel_is_reference ? spec.reference_path() : options.kernel;
  req.problem_dir = spec.dir;
  req.defines = options.defines;
  req.extra_flags = options.nvcc_flags;
  req.arch = options.arch;
  req.is_reference = options.kernel_is_reference;
  req.shown_as = options.kernel_shown_as;
  return compile(req);
}

}  // namespace mgk::eval
