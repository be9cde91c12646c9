// Helpers shared by the store tests: an EvalResult-shaped JSON and a store filled with one
// small run, written through the public Store API.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/store.h"

namespace mgk::store::test {

// The shape results::EvalResult::to_json() (src/eval/result.cc) writes: per size a check,
// the first mismatch as an object (null when correct), and timings (null when not timed).
inline nlohmann::json eval_result(const std::string& verdict, std::vector<double> speedups,
                                  const std::string& problem = "collectives/all_reduce") {
  nlohmann::json sizes = nlohmann::json::array();
  const char* names[] = {"small", "medium", "large", "xl"};
  for (size_t i = 0; i < speedups.size(); ++i) {
    double ref = 100.0 * double(i + 1);
    sizes.push_back({{"size", names[i % 4]},
                     {"correct", verdict == "correct"},
                     {"trials_passed", verdict == "correct" ? 3 : 1},
                     {"failure", verdict == "correct" ? "" : "output y mismatched on rank 1"},
                     {"mismatch", verdict == "correct" ? nlohmann::json(nullptr)
                                                       : nlohmann::json{{"output", "y"},
                                                                        {"rank", 1},
                                                                        {"index", "[17]"},
                                                                        {"got", 3.5},
                                                                        {"expected", 2.25},
                                                                        {"bound", 0.01},
                                                                        {"failures", 40},
                                                                        {"numel", 4096}}},
                     {"reference", {{"median_us", ref}, {"iterations", 100}}},
                     {"candidate",
                      {{"median_us", ref / speedups[i]},
                       {"iterations", 100},
                       {"per_rank_median_us", {ref / speedups[i] - 1, ref / speedups[i]}}}},
                     {"speedup", speedups[i]},
                     {"roofline_fraction", 0.5},
                     {"roofline_us", 10.0},
                     {"roofline_bound", "link"}});
  }
  return {{"verdict", verdict},
          {"message", verdict == "correct" ? "all sizes matched" : "output mismatched"},
          {"problem", problem},
          {"world_size", 2},
          {"gpus", {0, 1}},
          {"kernel_hash", "compile-cache-key"},
          {"compile_log", verdict == "compile_error" ? "kernel.cu(3): error: expected ';'" : ""},
          {"compile_seconds", 1.5},
          {"compile_cached", false},
          {"wall_seconds", 4.0},
          {"phase", ""},
          {"sizes", sizes}};
}

inline TurnRecord turn(int64_t attempt_id, int index, int64_t tokens_in = 100,
                       int64_t tokens_out = 50, double cost = 0.01) {
  TurnRecord t;
  t.attempt_id = attempt_id;
  t.index = index;
  t.messages = nlohmann::json::array(
      {{{"role", "system"}, {"content", "You write multi-GPU kernels."}},
       {{"role", "user"}, {"content", "Turn " + std::to_string(index) + ": write all_reduce."}}});
  t.reply = "```cuda\n// kernel " + std::to_string(index) + "\n```";
  t.tokens_in = tokens_in;
  t.tokens_out = tokens_out;
  t.tokens_cached = tokens_in / 2;
  t.tokens_reasoning = tokens_out / 5;
  t.cost_usd = cost;
  t.latency_s = 2.5;
  t.finish_reason = "stop";
  t.action = "kernel";
  t.feedback = "compiled; speedup 1.2x";
  return t;
}

inline AttemptStart attempt_start(int64_t run_id, const std::string& problem,
                                  const std::string& model = "anthropic:claude-test",
                                  const std::string& mode = "refine") {
  AttemptStart a;
  a.run_id = run_id;
  a.problem = problem;
  a.model = model;
  a.mode = mode;
  a.prompt_version = "2026-11-30.1";
  a.world_size = 2;
  return a;
}

// One run with one attempt on `problem`: two turns, the second correct at 1.5x/2.0x.
// Returns the attempt id.
inline int64_t record_sample_attempt(Store& store, const std::string& problem,
                                     const std::string& model = "anthropic:claude-test") {
  int64_t run = store.begin_run({"generate", model, {{"turns", 2}}});
  int64_t attempt = store.begin_attempt(attempt_start(run, problem, model));
  std::string bad = store.put_kernel("// wrong kernel for " + problem + "\n");
  std::string good = store.put_kernel("// right kernel for " + problem + "\n");

  TurnRecord t0 = turn(attempt, 0);
  t0.kernel_hash = bad;
  store.record_turn(t0);
  auto e0 = EvaluationRecord::from_result(eval_result("incorrect", {1.0, 1.0}, problem), bad);
  e0.attempt_id = attempt;
  e0.turn_index = 0;
  store.record_evaluation(e0);

  TurnRecord t1 = turn(attempt, 1);
  t1.kernel_hash = good;
  store.record_turn(t1);
  auto e1 = EvaluationRecord::from_result(eval_result("correct", {1.5, 2.0}, problem), good);
  e1.attempt_id = attempt;
  e1.turn_index = 1;
  store.record_evaluation(e1);

  store.finish_attempt(attempt, {Status::kDone, "turns_exhausted", good});
  store.finish_run(run, Status::kDone, {{"attempts", 1}});
  return attempt;
}

}  // namespace mgk::store::test
