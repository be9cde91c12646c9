#include "bench_run/rejudge.h"

#include <optional>
#include <set>
#include <utility>

#include "agent/agent.h"
#include "common/error.h"
#include "common/file.h"
#include "common/interrupt.h"
#include "sandboxing/runner.h"

namespace mgk::bench_run {
namespace {

namespace fs = std::filesystem;

struct Judged {
  std::optional<int> turn;
  std::string kernel_hash;
};

// What the old attempt had judged, in order: each judged turn once (where a turn was judged
// twice, the later evaluation, as reports read it), evaluations of no turn each.
std::vector<Judged> judged_turns(const std::vector<store::EvaluationRecord>& evaluations) {
  std::vector<Judged> out;
  std::map<int, size_t> at;
  for (const store::EvaluationRecord& e : evaluations) {
    if (e.turn_index) {
      if (auto it = at.find(*e.turn_index); it != at.end()) {
        out[it->second].kernel_hash = e.kernel_hash;
        continue;
      }
      at[*e.turn_index] = out.size();
    }
    out.push_back({e.turn_index, e.kernel_hash});
  }
  return out;
}

// The agent's rule: the fastest correct kernel, else (nothing timed) the first correct one.
std::optional<std::string> best_kernel(const std::vector<store::EvaluationRecord>& evaluations) {
  std::optional<std::string> best;
  std::optional<double> best_speedup;
  for (const store::EvaluationRecord& e : evaluations) {
    if (e.verdict != "correct") continue;
    if (!best || (e.speedup_min && (!best_speedup || *e.speedup_min > *best_speedup))) {
      best = e.kernel_hash;
      best_speedup = e.speedup_min;
    }
  }
  return best;
}

results::EvalResult could_not_judge(const store::AttemptSummary& old, const std::string& why) {
  results::EvalResult r;
  r.verdict = results::Verdict::kInfrastructure;
  r.message = why;
  r.problem = old.problem;
  r.world_size = old.world_size;
  return r;
}

}  // namespace

std::map<AttemptKey, store::AttemptSummary> judgeable_attempts(const std::vector<store::AttemptSummary>& old_run) {
  std::map<AttemptKey, store::AttemptSummary> newest;
  for (const store::AttemptSummary& a : old_run) newest[{a.problem, a.sample}] = a;  // oldest first
  std::map<AttemptKey, store::AttemptSummary> out;
  for (auto& [key, a] : newest)
    if (a.status == store::Status::kDone || a.status == store::Status::kFailed) out.emplace(key, std::move(a));
  return out;
}

Rejudger::Rejudger(store::Store& store, int64_t new_run, std::map<AttemptKey, store::AttemptSummary> old_attempts,
                   Judge judge, bool compile_only, const std::atomic<bool>* interrupt)
    : store_(store),
      new_run_(new_run),
      old_(std::move(old_attempts)),
      judge_(std::move(judge)),
      compile_only_(compile_only),
      interrupt_(interrupt) {
  auto run = store_.run(new_run_);
  if (!run) throw Error("rejudge: run " + std::to_string(new_run_) + " is not in the store");
  run_uuid_ = run->uuid;
}

int64_t Rejudger::run(const WorkItem& item, const Status& status) const {
  auto found = old_.find(item.key);
  if (found == old_.end())
    throw Error("rejudge: no finished attempt of " + item.key.problem + " sample " + std::to_string(item.key.sample));
  const store::AttemptSummary& old = found->second;
  int64_t id = 0;
  if (item.continue_attempt) {
    id = store_.reopen_attempt(*item.continue_attempt).id;
  } else {
    nlohmann::json config = old.config;
    config["rejudge_of_attempt"] = old.id;
    config["compile_only"] = compile_only_;
    id = store_.begin_attempt(
        {new_run_, old.problem, old.model, old.mode, old.prompt_version, old.sample, old.world_size, config});
  }

  std::set<int> copied;
  for (const store::TurnRecord& t : store_.turns(id)) copied.insert(t.index);
  for (store::TurnRecord t : store_.turns(old.id)) {
    if (copied.count(t.index)) continue;
    t.attempt_id = id;
    store_.record_turn(t);
  }

  // What a killed rejudge of this attempt had judged already, and each kernel's result once.
  std::set<int> judged;
  size_t judged_without_turn = 0;
  std::map<std::string, results::EvalResult> result_of;
  for (const store::EvaluationRecord& e : store_.evaluations_of_attempt(id)) {
    if (e.turn_index) judged.insert(*e.turn_index);
    else ++judged_without_turn;
    result_of.emplace(e.kernel_hash, e.result);
  }

  const fs::path dir = sandboxing::make_sandbox_dir(agent::sandbox_name(id, run_uuid_));
  const std::vector<Judged> todo = judged_turns(store_.evaluations_of_attempt(old.id));
  size_t without_turn = 0, n = 0;
  for (const Judged& j : todo) {
    ++n;
    // Judged by a rejudge that was killed: a turn by its index, evaluations of no turn by count.
    if (j.turn ? judged.count(*j.turn) > 0 : ++without_turn <= judged_without_turn) continue;
    if (interrupt_ && interrupt_->load()) {
      store_.finish_attempt(id, {store::Status::kInterrupted, old.exit_reason, std::nullopt});
      return id;
    }
    auto cached = result_of.find(j.kernel_hash);
    results::EvalResult result;
    if (cached != result_of.end()) {
      result = cached->second;  // the same kernel sent again: judged once
    } else {
      const auto source = store_.kernel_source(j.kernel_hash);
      if (!source)
        throw Error("rejudge: kernel " + j.kernel_hash.substr(0, 12) + " of attempt " + std::to_string(old.id) +
                    " is not in the store");
      const fs::path file = dir / ("kernel_turn" + std::to_string(j.turn.value_or(int(n) - 1) + 1) + ".cu");
      write_file(file, *source);
      if (status) status("judging kernel " + std::to_string(n) + " of " + std::to_string(todo.size()));
      results::EvalResult r;
      bool cut_off = false;
      try {
        r = judge_(old.problem, file, status);
      } catch (const Interrupted&) {
        cut_off = true;
      } catch (const Error& e) {
        r = could_not_judge(old, e.what());
      }
      // Ctrl-C reaches the evaluator's processes too: what it ended says nothing of the
      // kernel, so nothing is stored and a resume judges the kernel again.
      const bool settled = r.verdict == results::Verdict::kCorrect || r.verdict == results::Verdict::kIncorrect;
      if (cut_off || (interrupt_ && interrupt_->load() && !settled)) {
        store_.finish_attempt(id, {store::Status::kInterrupted, old.exit_reason, std::nullopt});
        return id;
      }
      result = std::move(r);
      result_of.emplace(j.kernel_hash, result);
    }
    store::EvaluationRecord e = store::EvaluationRecord::from_result(result, j.kernel_hash);
    e.attempt_id = id;
    e.turn_index = j.turn;
    store_.record_evaluation(e);
  }
  store_.finish_attempt(id, {old.status, old.exit_reason, best_kernel(store_.evaluations_of_attempt(id))});
  return id;
}

}  // namespace mgk::bench_run
