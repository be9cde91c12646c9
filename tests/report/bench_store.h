// Bench runs written into a real store through the public Store API, the way the agent
// writes them (turn, then its evaluation built from results::EvalResult::to_json()), for the
// report and bench tests. The verdict builders give the shapes the evaluator returns: timed
// correct results with speedups and roofline fractions, correct results from ranks sharing
// a GPU (no timings), compile-only results, failures.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/hash.h"
#include "results/eval_result.h"
#include "store/store.h"
#include "support/verdicts.h"

namespace mgk::report::test {

// Correct at sizes small and large with these speedups (reference 100 us) and fractions.
inline results::EvalResult timed_correct(double small_speedup, double large_speedup,
                                      std::optional<double> roofline = std::nullopt) {
  results::EvalResult r = mgk::test::correct_result(small_speedup, large_speedup);
  r.message = "correct at 2 size(s)";
  r.gpus = {0, 1};
  r.wall_seconds = 4;
  for (auto& s : r.sizes) s.roofline_fraction = roofline;
  return r;
}

// Correct, checked with `world` ranks on GPU 0: nothing timed.
inline results::EvalResult shared_correct(int world = 2) {
  results::EvalResult r;
  r.verdict = results::Verdict::kCorrect;
  r.message = "correct at 2 size(s); not timed: ranks share a GPU (time-sliced), so only correctness was checked";
  r.gpus = std::vector<int>(size_t(world), 0);
  r.wall_seconds = 3;
  for (const char* name : {"small", "large"}) {
    results::SizeResult s;
    s.size = name;
    s.correct = true;
    s.trials_passed = 3;
    r.sizes.push_back(s);
  }
  return r;
}

inline results::EvalResult verdict(results::Verdict v, const std::string& message = "") {
  results::EvalResult r;
  r.verdict = v;
  r.message = message.empty() ? results::to_string(v) : message;
  r.refused = message.rfind("refused", 0) == 0;  // as the evaluator words a refusal
  r.compile_seconds = 1.5;
  if (v != results::Verdict::kCompiled && v != results::Verdict::kCompileError) r.gpus = {0, 1};
  return r;
}

// One turn of an attempt: what the reply was taken as, and the kernel and its verdict if any.
struct ScriptTurn {
  std::string action = "kernel";
  std::string source;  // empty: no kernel (format error)
  std::optional<results::EvalResult> result;
  double cost_usd = 0.01;
};

inline ScriptTurn kernel_turn(const std::string& source, results::EvalResult result, double cost = 0.01) {
  return {"kernel", source, std::move(result), cost};
}
inline std::string sha256_of(const std::string& source) { return sha256_hex(source); }
inline ScriptTurn prose_turn() { return {"format_error", "", std::nullopt, 0.002}; }

inline int64_t begin_bench_run(store::Store& s, int samples, const std::string& model = "openai:gpt-test") {
  return s.begin_run({"bench", model, {{"samples", samples}, {"mode", "refine"}}});
}

// Writes one attempt: each turn, then (as the agent does) its evaluation; then its end.
inline int64_t record_attempt(store::Store& s, int64_t run, const std::string& problem, int sample,
                              const std::vector<ScriptTurn>& turns, store::Status status = store::Status::kDone,
                              const std::string& exit_reason = "turns_exhausted") {
  store::AttemptStart a;
  a.run_id = run;
  a.problem = problem;
  a.model = "openai:gpt-test";
  a.mode = "refine";
  a.prompt_version = "test";
  a.sample = sample;
  a.world_size = 2;
  const int64_t id = s.begin_attempt(a);
  std::optional<std::string> best;
  std::optional<double> best_speedup;
  for (size_t i = 0; i < turns.size(); ++i) {
    const ScriptTurn& t = turns[i];
    store::TurnRecord tr;
    tr.attempt_id = id;
    tr.index = int(i);
    tr.reply = t.source.empty() ? "I would rather explain." : "```cuda\n" + t.source + "```";
    tr.tokens_in = 1000 * int64_t(i + 1);
    tr.tokens_out = 200;
    tr.cost_usd = t.cost_usd;
    tr.latency_s = 2;
    tr.action = t.action;
    if (!t.source.empty()) tr.kernel_hash = s.put_kernel(t.source);
    s.record_turn(tr);
    if (t.result && tr.kernel_hash) {
      results::EvalResult r = *t.result;
      r.problem = problem;
      r.world_size = 2;
      auto e = store::EvaluationRecord::from_result(r.to_json(), *tr.kernel_hash);
      e.attempt_id = id;
      e.turn_index = int(i);
      s.record_evaluation(e);
      if (r.verdict == results::Verdict::kCorrect && (!best || (e.speedup_min && (!best_speedup || *e.speedup_min > *best_speedup)))) {
        best = tr.kernel_hash;
        best_speedup = e.speedup_min;
      }
    }
  }
  if (status != store::Status::kRunning) s.finish_attempt(id, {status, exit_reason, best});
  return id;
}

// A kernel source that names a transfer mechanism and a synchronisation, for feature counts.
inline std::string register_kernel(const std::string& tag) {
  return "// " + tag +
         "\n__global__ void k(void* const* x_peers, float* y) { y[threadIdx.x] = ((float*)x_peers[1])[threadIdx.x]; "
         "asm volatile(\"st.release.sys.global.u64 [%0], 1;\" :: \"l\"(y)); }\n";
}
inline std::string copy_engine_kernel(const std::string& tag) {
  return "// " + tag + "\nint run(void* d, const void* s, cudaStream_t st) { return cudaMemcpyAsync(d, s, 64, "
         "cudaMemcpyDefault, st); }\n";
}

}  // namespace mgk::report::test

namespace mgk::report::test {

// The report JSON without what depends on when and how fast the run went (render_data.h
// names it): "run", "attempt_id" and every "wall_s". What is left must be equal for two
// runs that stored the same results.
inline nlohmann::json without_run_dependent_fields(nlohmann::json j) {
  if (j.is_object()) {
    for (const char* key : {"run", "attempt_id", "wall_s"}) j.erase(key);
    for (auto& [k, v] : j.items()) v = without_run_dependent_fields(v);
  } else if (j.is_array()) {
    for (auto& v : j) v = without_run_dependent_fields(v);
  }
  return j;
}

}  // namespace mgk::report::test
