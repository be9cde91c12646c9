#include "report/outcome.h"

#include "eval/evaluate.h"
#include "report/statistics.h"

#include <algorithm>

namespace mgk::report {
namespace {

struct OutcomeName {
  Outcome outcome;
  const char* id;
  const char* words;
};
constexpr OutcomeName kNames[] = {
    {Outcome::kCorrect, "correct", "correct"},
    {Outcome::kCompiled, "compiled", "compiled (not run)"},
    {Outcome::kWrong, "wrong", "wrong"},
    {Outcome::kHang, "hang", "hang"},
    {Outcome::kCrash, "crash", "crash"},
    {Outcome::kDidNotCompile, "did_not_compile", "did not compile"},
    {Outcome::kRefused, "refused", "refused"},
    {Outcome::kNoKernel, "no_kernel", "no kernel"},
    {Outcome::kInfrastructure, "infrastructure", "infrastructure"},
    {Outcome::kUnfinished, "unfinished", "unfinished"},
};

Outcome outcome_of(const store::EvaluationRecord& e) {
  const results::EvalResult& r = e.result;
  switch (r.verdict) {
    case results::Verdict::kCorrect: return Outcome::kCorrect;
    case results::Verdict::kCompiled: return Outcome::kCompiled;
    case results::Verdict::kIncorrect: return Outcome::kWrong;
    case results::Verdict::kTimeout: return Outcome::kHang;
    case results::Verdict::kRuntimeError: return r.refused ? Outcome::kRefused : Outcome::kCrash;
    case results::Verdict::kCompileError: return r.refused ? Outcome::kRefused : Outcome::kDidNotCompile;
    case results::Verdict::kInfrastructure: break;
  }
  return Outcome::kInfrastructure;
}

// A size's candidate was timed (a time under the floor included: timed, not credited).
bool any_size_timed(const results::EvalResult& r) {
  return std::any_of(r.sizes.begin(), r.sizes.end(), [](const results::SizeResult& s) { return s.candidate.has_value(); });
}

std::optional<double> median_roofline(const results::EvalResult& r) {
  std::vector<double> f;
  for (const results::SizeResult& s : r.sizes)
    if (s.roofline_fraction) f.push_back(*s.roofline_fraction);
  return median(f);
}

}  // namespace

const char* to_string(Outcome o) {
  for (const auto& n : kNames)
    if (n.outcome == o) return n.id;
  return "unknown";
}

const char* describe(Outcome o) {
  for (const auto& n : kNames)
    if (n.outcome == o) return n.words;
  return "unknown";
}

std::vector<Outcome> all_outcomes() {
  std::vector<Outcome> out;
  for (const auto& n : kNames) out.push_back(n.outcome);
  return out;
}

bool compiled_something(Outcome o) {
  return o == Outcome::kCorrect || o == Outcome::kCompiled || o == Outcome::kWrong || o == Outcome::kHang ||
         o == Outcome::kCrash;
}

std::string category_of(const std::string& problem) { return problem.substr(0, problem.find('/')); }

std::string no_speedup_because(const AttemptResult& r) {
  if (r.outcome != Outcome::kCorrect || r.speedup) return "";
  if (!r.timed) return r.not_timed_because == "not timed" ? "not timed" : "not timed: " + r.not_timed_because;
  return r.credible ? "no speedup" : "timed under the timing floor";
}

bool faster_than(const AttemptResult& r, double p) {
  return r.outcome == Outcome::kCorrect && r.timed && r.speedup && *r.speedup > p;
}

namespace {

std::vector<SizeTiming> size_timings(const results::EvalResult& r) {
  std::vector<SizeTiming> out;
  for (const results::SizeResult& s : r.sizes) {
    SizeTiming t;
    t.size = s.size;
    if (s.reference) t.reference_us = s.reference->median_us;
    if (s.candidate) t.kernel_us = s.candidate->median_us;
    t.speedup = s.credited_speedup();
    if (s.link_bytes > 0 && t.kernel_us && *t.kernel_us > 0 && t.speedup)
      t.link_gbps = s.link_bytes / (*t.kernel_us * 1e-6) / 1e9;
    out.push_back(t);
  }
  return out;
}

}  // namespace

AttemptResult classify(const AttemptData& a) {
  const store::AttemptSummary& s = a.summary;
  AttemptResult r;
  r.attempt_id = s.id;
  r.problem = s.problem;
  r.category = category_of(s.problem);
  r.sample = s.sample;
  r.world_size = s.world_size;
  r.exit_reason = s.exit_reason;
  r.turns = int(a.turns.size());
  r.tokens_in = s.tokens_in;
  r.tokens_out = s.tokens_out;
  r.cost_usd = s.cost_usd;
  for (const TurnView& t : a.turns) r.wall_s += t.latency_s;

  const store::EvaluationRecord* best = nullptr;  // the evaluation the outcome rests on
  for (const store::EvaluationRecord& e : a.evaluations) {
    r.wall_s += e.result.wall_seconds > 0 ? e.result.wall_seconds : e.result.compile_seconds;
    if (!best || outcome_of(e) < outcome_of(*best)) {
      best = &e;
    } else if (outcome_of(e) == Outcome::kCorrect) {
      // Among correct kernels the fastest; among untimed ones the first.
      const std::optional<double> mine = e.result.speedup(), theirs = best->result.speedup();
      if (mine && (!theirs || *mine > *theirs)) best = &e;
    }
  }
  for (const TurnView& t : a.turns) {
    TurnVerdict v{t.index, t.action, "", "", std::nullopt, false};
    for (const auto& e : a.evaluations)
      if (e.turn_index == t.index) {
        v.verdict = e.verdict, v.message = e.message, v.speedup = e.result.speedup();
        v.timed = any_size_timed(e.result);
      }
    r.turn_verdicts.push_back(v);
  }

  // An attempt the provider or the evaluator cut short says nothing of the model unless it
  // already has a correct kernel: its wrong kernel of an earlier turn is not its last word.
  const bool cut_short = s.status == store::Status::kFailed || s.exit_reason == "api_error";
  if (s.status == store::Status::kRunning || s.status == store::Status::kInterrupted) {
    r.outcome = Outcome::kUnfinished;
  } else if (best && (!cut_short || outcome_of(*best) == Outcome::kCorrect)) {
    r.outcome = outcome_of(*best);
  } else {
    r.outcome = cut_short || best ? Outcome::kInfrastructure : Outcome::kNoKernel;
  }
  if (best) {
    r.kernel_hash = best->kernel_hash;
    if (auto it = a.sources.find(best->kernel_hash); it != a.sources.end()) r.features = detect_features(it->second);
  }
  if (best && outcome_of(*best) == Outcome::kCorrect) {
    // From the result, not the stored column: rows written before the floor rule kept the
    // credible sizes' speedups of a kernel timed under the floor at another size.
    const results::EvalResult& res = best->result;
    r.credible = res.credible();
    r.timed = any_size_timed(res);
    r.speedup = res.speedup();
    if (r.timed) r.roofline_fraction = median_roofline(res);
    if (r.timed) r.sizes = size_timings(res);
    else r.not_timed_because = eval::ranks_share_gpu(best->gpus) ? "ranks shared a GPU" : "not timed";
  } else if (best && outcome_of(*best) == Outcome::kCompiled) {
    r.not_timed_because = "compile only";
  }
  return r;
}

}  // namespace mgk::report
