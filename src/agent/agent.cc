#include "agent/agent.h"

#include <chrono>
#include <cstdio>
#include <sstream>

#include "agent/feedback.h"
#include "agent/host_paths.h"
#include "agent/reply_parser.h"
#include "agent/trajectory.h"
#include "common/file.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "common/text.h"
#include "llm/api_error.h"
#include "llm/config.h"

namespace mgk::agent {
namespace fs = std::filesystem;

namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// mini-swe-agent's rule: the output's first line is the sentinel (or the command is
// exactly the echo that prints it).
bool is_submission(const std::string& command, const std::string& output) {
  return trimmed(output.substr(0, output.find('\n'))) == kSubmitSentinel ||
         trimmed(command) == std::string("echo ") + kSubmitSentinel;
}
// The most the next call can cost: every output token it may write (max tokens) at the
// output price, and the conversation it sends (estimated as characters / 4, as --dry-run
// does) at the uncached input price. 0 for a model with no price (no limit applies).
double next_call_worst_usd(const llm::Provider& provider, const std::string& system,
                           const std::vector<llm::Message>& history, int max_tokens) {
  const auto price = provider.price();
  if (!price) return 0;
  size_t chars = system.size();
  for (const llm::Message& m : history) chars += m.content.size();
  return (double(chars) / 4 * price->price.input + double(max_tokens) * price->price.output) / 1e6;
}

}  // namespace

struct Agent::StepResult {
  Action action = Action::kKernel;
  std::string outcome;  // one short phrase for the progress line
  std::optional<std::string> kernel_hash;
  std::string feedback;  // the next user message; empty when the session ends here
  std::optional<double> speedup;
  bool interrupted = false;  // Ctrl-C cut the judging short: nothing was learnt of the kernel
};

void check_cost_limits(const llm::Provider& provider, const std::vector<CostLimit>& limits) {
  if (provider.price()) return;
  std::string given, lift;
  for (const CostLimit& l : limits) {
    if (l.usd <= 0) continue;
    char usd[32];
    std::snprintf(usd, sizeof usd, "$%g", l.usd);
    given += (given.empty() ? "" : ", ") + l.flag + " " + usd;
    lift += (lift.empty() ? "" : " ") + l.flag + " 0";
  }
  if (given.empty()) return;
  const std::string name = provider.name();
  const std::filesystem::path config = llm::default_config_path();
  throw UsageError("no price is known for " + name + ", so a cost limit (" + given +
                   ") cannot be enforced: give its price in " +
                   (config.empty() ? std::string("the config file ($MGK_CONFIG)") : config.string()) +
                   " as \"prices\": {\"" + name + "\": {\"input\": USD_PER_MTOK, \"output\": " +
                   "USD_PER_MTOK}}, or pass " + lift + " for no cost limit");
}

void check_cost_limit(const llm::Provider& provider, const Limits& limits) {
  check_cost_limits(provider, {{"--max-cost", limits.max_cost_usd}});
}

store::AttemptSummary resumable_attempt(store::Store& store, int64_t attempt_id, const ResumeExpectation& expect) {
  const std::string which = "attempt " + std::to_string(attempt_id);
  auto s = store.attempt(attempt_id);
  if (!s)
    throw NotFoundError("no " + which + " in " + store.path().string() + " ('mgk history' lists them)");
  if (s->exit_reason == to_string(ExitReason::kSubmitted))
    throw UsageError(which + " was submitted; there is nothing to resume");
  if ((!expect.problem.empty() && expect.problem != s->problem) || (!expect.model.empty() && expect.model != s->model))
    throw UsageError(which + " is " + s->problem + " with " + s->model +
                     "; leave --problem and --model out to resume it");
  if (expect.mode && s->mode != to_string(*expect.mode))
    throw UsageError(which + " ran in " + s->mode + " mode, not " + to_string(*expect.mode));
  return *s;
}

std::string sandbox_name(int64_t attempt_id, const std::string& run_uuid) {
  return std::to_string(attempt_id) + "-" + run_uuid.substr(0, 12);
}

Agent::Agent(AgentSetup setup, AgentDeps deps) : setup_(std::move(setup)), deps_(deps) {
  if (!deps_.provider || !deps_.judge || !deps_.store || !deps_.prompts)
    throw Error("agent: provider, judge, store and prompts are all required");
  check_cost_limit(*deps_.provider, setup_.limits);
}
Agent::~Agent() = default;

AttemptOutcome Agent::start(int64_t run_id) {
  run_id_ = run_id;
  attempt_id_ = deps_.store->begin_attempt(
      {run_id, setup_.problem, deps_.provider->name(), to_string(setup_.mode),
       deps_.prompts->version(), setup_.sample, setup_.world_size, setup_.config});
  system_ = setup_.prompt.system;
  history_ = unsent_ = {{"user", setup_.prompt.user}};
  return run();
}

AttemptOutcome Agent::resume(int64_t attempt_id) {
  const store::AttemptSummary summary = resumable_attempt(*deps_.store, attempt_id, {"", "", setup_.mode});
  if (summary.prompt_version != deps_.prompts->version())
    log::warning("attempt " + std::to_string(attempt_id) + " began with prompts " +
                 summary.prompt_version + "; it continues with " + deps_.prompts->version());
  deps_.store->reopen_attempt(attempt_id);
  run_id_ = summary.run_id;
  attempt_id_ = attempt_id;
  std::vector<store::TurnRecord> turns = deps_.store->turns(attempt_id);
  if (turns.empty()) {
    system_ = setup_.prompt.system;
    history_ = unsent_ = {{"user", setup_.prompt.user}};
  } else {
    Conversation c = rebuild_conversation(turns);
    system_ = c.system;
    history_ = c.messages;
    unsent_ = {history_.back()};
    if (c.last_reply_pending) {
      pending_turn_ = turns.back().index;
      pending_reply_ = turns.back().reply;
      unsent_.clear();  // that reply's turn stored what it was sent
    }
  }
  turns_ = int(turns.size());
  for (const auto& t : turns)
    if (t.kernel_hash) first_turn_of_.emplace(*t.kernel_hash, t.index);
  tokens_in_ = summary.tokens_in;
  tokens_out_ = summary.tokens_out;
  cost_ = summary.cost_usd.value_or(0);  // unknown: no price, so no limit counts it
  best_hash_ = summary.best_kernel_hash;
  best_speedup_ = summary.best_speedup;
  return run();
}

void Agent::prepare_sandbox() {
  auto run = deps_.store->run(run_id_);
  if (!run) throw Error("attempt " + std::to_string(attempt_id_) + " has no run in the store");
  sandbox_ = sandboxing::make_sandbox_dir(sandbox_name(attempt_id_, run->uuid));
  for (const auto& [name, text] : setup_.sandbox_files)
    if (!fs::exists(sandbox_ / name)) write_file(sandbox_ / name, text);
  for (const auto& [name, target] : setup_.sandbox_links)
    if (!fs::exists(fs::symlink_status(sandbox_ / name))) fs::create_directory_symlink(fs::absolute(target), sandbox_ / name);
  if (best_hash_ && !fs::exists(sandbox_ / "best.cu"))
    if (auto source = deps_.store->kernel_source(*best_hash_)) write_file(sandbox_ / "best.cu", *source);
  if (setup_.mode != Mode::kShell) return;
  fs::create_directories(sandbox_ / ".mgk");  // the sandbox's own compile cache and scratch store
  sandboxing::RunnerOptions o = setup_.runner;
  o.sandbox_dir = sandbox_;
  for (const auto& link : setup_.sandbox_links) o.read_only.push_back(fs::absolute(link.second));  // where they lead
  o.cancel = deps_.interrupt;
  o.timeout_s = setup_.command_timeout_s;
  o.extra_env["MGK_HOME"] = (sandbox_ / ".mgk").string();
  o.extra_env["MGK_DB"] = (sandbox_ / ".mgk" / "mgk.db").string();
  runner_ = std::make_unique<sandboxing::Runner>(o);
}

AttemptOutcome Agent::run() {
  started_ = now_s();
  // What was finished is stored; on an error the attempt is marked failed so that history
  // says so, and the error travels on (with context when it is ours). Ctrl-C leaves it
  // interrupted: nothing about it failed, and a resumed run continues it.
  auto mark = [this](store::Status status, const std::string& reason) {
    try {
      deps_.store->finish_attempt(attempt_id_, {status, reason, best_hash_});
    } catch (const std::exception& secondary) {
      log::warning("could not record how the attempt ended (" + reason + "): " + secondary.what());
    }
  };
  try {
    prepare_sandbox();
    if (pending_turn_) {  // paid for by the process that stored it
      act_on(*pending_turn_, pending_reply_, Paid{});
      pending_turn_.reset();
      if (exit_) return finish(*exit_);
    }
    while (true) {
      if (auto reason = limit_reached()) return finish(*reason);
      step();
      if (exit_) return finish(*exit_);
    }
  } catch (const Interrupted&) {
    mark(status_of(ExitReason::kInterrupted), to_string(ExitReason::kInterrupted));
    throw;
  } catch (Error& e) {
    mark(store::Status::kFailed, "error");
    e.with_context("in attempt " + std::to_string(attempt_id_) + " (" + setup_.problem + ")");
    throw;
  } catch (const std::exception&) {
    mark(store::Status::kFailed, "error");
    throw;
  }
}

std::optional<ExitReason> Agent::limit_reached() const {
  const Limits& l = setup_.limits;
  if (ctrl_c()) return ExitReason::kInterrupted;
  if (deps_.stop && deps_.stop->load()) return ExitReason::kInterrupted;
  if (format_errors_in_a_row_ >= l.max_format_errors) return ExitReason::kFormatErrors;
  if (turns_ >= l.turns) return ExitReason::kTurnsExhausted;
  // Stopped before a call that could take the attempt past its limit, not after one did.
  if (l.max_cost_usd > 0 &&
      cost_ + next_call_worst_usd(*deps_.provider, system_, history_, setup_.sampling.max_tokens) > l.max_cost_usd)
    return ExitReason::kCostLimit;
  if (l.max_seconds > 0 && now_s() - started_ >= l.max_seconds) return ExitReason::kTimeLimit;
  return std::nullopt;
}

void Agent::step() {
  const int index = turns_;
  // The run's budget: this call's worst case is held before it is made, released with what
  // it cost however it ends.
  const double worst = deps_.budget ? next_call_worst_usd(*deps_.provider, system_, history_,
                                                          setup_.sampling.max_tokens)
                                    : 0;
  if (deps_.budget && !deps_.budget->hold(worst)) {
    exit_ = ExitReason::kInterrupted;  // as a bench's spent budget ends attempts: resumable
    exit_message_ = "the run stopped before this call (its budget could not cover it, or Ctrl-C)";
    return;
  }
  struct Settle {
    SharedBudget* budget;
    double held;
    void operator()(double cost_usd) {
      if (budget) budget->settle(held, cost_usd);
      budget = nullptr;
    }
    ~Settle() { (*this)(0); }  // the call failed or was cut short: nothing came back to pay for
  } settle{deps_.budget, worst};
  llm::Reply reply;
  try {
    reply = query();
    settle(reply.cost_usd.value_or(0));  // unknown: a model with no price, which has no budget
  } catch (const llm::ApiError& e) {
    exit_ = ExitReason::kApiError;
    exit_message_ = e.what();
    return;
  } catch (const Interrupted&) {  // Ctrl-C cut the call short: nothing came back to store
    exit_ = ExitReason::kInterrupted;
    return;
  }
  const bool truncated = reply.finish == llm::FinishReason::kLength;
  // The reply is paid for: it is stored before anything is done with it (judging takes
  // minutes), pending, so that a kill loses nothing and a resume acts on it unasked.
  store::TurnRecord t;
  t.attempt_id = attempt_id_;
  t.index = index;
  t.messages = new_messages_json(index == 0 ? system_ : "", unsent_);
  t.reply = reply.text;
  t.tokens_in = reply.usage.input_tokens;
  t.tokens_out = reply.usage.output_tokens;
  t.tokens_cached = reply.usage.cached_input_tokens;
  t.tokens_reasoning = reply.usage.reasoning_tokens;
  t.cost_usd = reply.cost_usd;
  t.latency_s = reply.latency_s;
  t.finish_reason = reply.raw_finish;
  std::optional<StepResult> cut;  // a reply cut at max tokens is answered at once
  if (truncated) cut = truncated_reply();
  t.action = cut ? to_string(Action::kTruncated) : store::kTurnPending;
  if (cut) t.feedback = finished_feedback(index, *cut);
  deps_.store->record_turn(t);

  ++turns_;
  tokens_in_ += t.tokens_in;
  tokens_out_ += t.tokens_out;
  cost_ += t.cost_usd.value_or(0);
  history_.push_back({"assistant", reply_as_sent(reply.text)});
  unsent_.clear();
  const Paid paid{t.tokens_in, t.tokens_out, t.cost_usd.value_or(0)};
  if (cut) return answered(index, *cut, t.feedback, paid);
  act_on(index, reply.text, paid);
}

// What the model is told of a reply cut at max tokens.
Agent::StepResult Agent::truncated_reply() {
  ++format_errors_in_a_row_;
  return {Action::kTruncated, "reply cut at max tokens", std::nullopt,
          deps_.prompts->render("feedback/truncated", {{"max_tokens", std::to_string(setup_.sampling.max_tokens)},
                                                       {"shell_mode", setup_.mode == Mode::kShell ? "1" : ""}}),
          std::nullopt};
}

std::string Agent::finished_feedback(int index, const StepResult& r) const {
  if (r.feedback.empty()) return "";
  // It quotes the compiler, the ranks and the evaluator: whatever bytes they wrote, the
  // feedback must travel as JSON to the provider (now and when a resume sends it again).
  return to_valid_utf8(r.feedback + limits_warning(index + 1));
}

void Agent::act_on(int index, const std::string& reply_text, const Paid& paid) {
  StepResult r = setup_.mode == Mode::kShell ? execute_shell(reply_text) : execute_refine(reply_text, index);
  if (r.interrupted) {  // Ctrl-C cut the judging short: the turn stays pending for a resume
    exit_ = ExitReason::kInterrupted;
    return;
  }
  const std::string feedback = finished_feedback(index, r);
  deps_.store->complete_turn(attempt_id_, index, to_string(r.action), r.kernel_hash, feedback);
  answered(index, r, feedback, paid);
}

void Agent::answered(int index, const StepResult& r, const std::string& feedback, const Paid& paid) {
  if (!feedback.empty()) {
    history_.push_back({"user", feedback});
    unsent_.push_back(history_.back());
  }
  if (on_turn) on_turn({index, r.action, r.outcome, r.speedup, paid.tokens_in, paid.tokens_out, paid.cost_usd, cost_});
}

llm::Reply Agent::query() {
  llm::Request request;
  request.system = system_;
  request.messages = history_;
  request.max_tokens = setup_.sampling.max_tokens;
  request.temperature = setup_.sampling.temperature;
  request.reasoning_effort = setup_.sampling.reasoning_effort;
  request.cancel = deps_.interrupt;
  return deps_.provider->complete(request);
}

// A reply the parser refused: counted (the limit on format errors in a row) and answered
// with what was wrong, not judged.
Agent::StepResult Agent::format_error(const std::string& problem, bool shell_mode) {
  ++format_errors_in_a_row_;
  return {Action::kFormatError, problem, std::nullopt,
          deps_.prompts->render("feedback/format_error", {{"reason", problem},
                                                          {"shell_mode", shell_mode ? "1" : ""},
                                                          {"submit_sentinel", kSubmitSentinel}}),
          std::nullopt};
}

Agent::StepResult Agent::execute_refine(const std::string& reply_text, int index) {
  ParsedReply parsed = parse_kernel_reply(reply_text);
  if (!parsed.ok) return format_error(parsed.problem, false);
  format_errors_in_a_row_ = 0;
  const fs::path file = sandbox_ / ("kernel_turn" + std::to_string(index + 1) + ".cu");
  write_file(file, parsed.code);
  const std::string hash = deps_.store->put_kernel(parsed.code);
  // A kernel resent byte for byte is judged again (fresh inputs, fresh timings), its build
  // found in the compile cache; the model and the stored turn are told which turn it repeats.
  const auto [first, resent] = first_turn_of_.emplace(hash, index);
  const results::EvalResult result = HostPaths::of_this_machine(sandbox_).relative(judge_kernel(file, hash, index));
  StepResult r{Action::kKernel, verdict_summary(result), hash,
               render_feedback(*deps_.prompts, result, index + 1, setup_.limits.turns), result.speedup()};
  if (!resent && first->second != index) {
    const std::string turn = std::to_string(first->second + 1);
    r.outcome += " (unchanged from turn " + turn + ")";
    r.feedback = deps_.prompts->render("feedback/unchanged",
                                       {{"turn", turn}, {"build_reused", result.compile_cached ? "1" : ""}}) +
                 "\n" + r.feedback;
  }
  if (ctrl_c() && result.verdict == results::Verdict::kInfrastructure) {
    r.interrupted = true;
  } else if (result.verdict == results::Verdict::kInfrastructure) {
    // Another call would be billed for a failure that is not the kernel's: stop here. The
    // feedback is stored all the same, so a resumed session asks for the kernel again.
    exit_ = ExitReason::kInfrastructure;
    exit_message_ = "the evaluator failed: " + result.message;
  }
  return r;
}

Agent::StepResult Agent::execute_shell(const std::string& reply_text) {
  ParsedReply parsed = parse_shell_reply(reply_text);
  if (!parsed.ok) return format_error(parsed.problem, true);
  format_errors_in_a_row_ = 0;
  process::ProcessResult ran = runner_->run_shell(parsed.code);
  if (is_submission(parsed.code, ran.output)) {
    exit_ = ExitReason::kSubmitted;
    return {Action::kSubmit, "submitted", std::nullopt, "", std::nullopt};
  }
  const std::string status = ran.status_line(setup_.command_timeout_s);
  // What the command printed, as the model reads it: no host paths (pwd, compile errors,
  // the links' targets), the same on every machine.
  const std::string output = HostPaths::of_this_machine(sandbox_).relative(ran.output);
  return {Action::kShell, status, std::nullopt,
          deps_.prompts->render("feedback/shell_observation", {{"status", status}, {"output", output}}),
          std::nullopt};
}

results::EvalResult Agent::judge_kernel(const fs::path& file, const std::string& hash, int index) {
  results::EvalResult result;
  // The judge could not work (Ctrl-C included): an infrastructure verdict, recorded like any
  // other, so the turn that paid for the kernel is kept; the next turn sees the flag.
  auto could_not_judge = [&](const char* why) {
    result = results::EvalResult{};
    result.verdict = results::Verdict::kInfrastructure;
    result.message = why;
    result.problem = setup_.problem;
    result.world_size = setup_.world_size;
  };
  try {
    result = deps_.judge->judge(file);
  } catch (const Interrupted& e) {
    could_not_judge(e.what());
  } catch (const Error& e) {
    could_not_judge(e.what());
  }
  // Ctrl-C reaches the evaluator's processes too (they share the terminal): a failure seen
  // after it says nothing about the kernel, and is stored as the infrastructure's.
  if (ctrl_c() && result.verdict != results::Verdict::kCorrect && result.verdict != results::Verdict::kIncorrect &&
      result.verdict != results::Verdict::kInfrastructure) {
    result.message = "the evaluation was interrupted (Ctrl-C) before it finished (it had come to " +
                     std::string(results::to_string(result.verdict)) + ": " + result.message + ")";
    result.verdict = results::Verdict::kInfrastructure;
  }
  store::EvaluationRecord e = store::EvaluationRecord::from_result(result, hash);
  e.attempt_id = attempt_id_;
  if (index >= 0) e.turn_index = index;
  deps_.store->record_evaluation(e);
  if (result.verdict != results::Verdict::kCorrect) return result;
  // The fastest correct kernel wins; where nothing is timed (ranks sharing a GPU) the
  // first correct one is kept.
  const std::optional<double> speedup = result.speedup();
  if (!best_hash_ || (speedup && (!best_speedup_ || *speedup > *best_speedup_))) {
    best_speedup_ = speedup;
    best_hash_ = hash;
    fs::copy_file(file, sandbox_ / "best.cu", fs::copy_options::overwrite_existing);
  }
  return result;
}

std::string Agent::limits_warning(int next_index) const {
  if (setup_.limits.turns - next_index != 1) return "";
  const bool shell = setup_.mode == Mode::kShell;
  return "\n\n" + deps_.prompts->render(
                      "feedback/limits_reached",
                      {{"reason", "the limit of " + std::to_string(setup_.limits.turns) +
                                      (shell ? " commands" : " turns")},
                       {"shell_mode", shell ? "1" : ""},
                       {"submit_sentinel", kSubmitSentinel}});
}

AttemptOutcome Agent::finish(ExitReason reason) {
  // Shell mode: whatever kernel.cu holds at the end is judged (on submission, and when a
  // limit cut the session short), unless the user asked to stop.
  const fs::path final_kernel = sandbox_ / "kernel.cu";
  if (setup_.mode == Mode::kShell && reason != ExitReason::kInterrupted && fs::exists(final_kernel)) {
    final_result_ = judge_kernel(
        final_kernel, deps_.store->put_kernel(read_file(final_kernel, "the final kernel")), turns_ - 1);
    if (final_result_->verdict == results::Verdict::kInfrastructure && reason != ExitReason::kApiError) {
      reason = ctrl_c() ? ExitReason::kInterrupted : ExitReason::kInfrastructure;
      if (!ctrl_c()) exit_message_ = "the evaluator failed on the final kernel.cu: " + final_result_->message;
    }
  }
  deps_.store->finish_attempt(attempt_id_, {status_of(reason), to_string(reason), best_hash_});

  AttemptOutcome o;
  o.attempt_id = attempt_id_;
  o.reason = reason;
  o.message = exit_message_;
  o.sandbox_dir = sandbox_;
  if (best_hash_ && fs::exists(sandbox_ / "best.cu")) o.best_kernel = sandbox_ / "best.cu";
  o.best_speedup = best_speedup_;
  o.final_result = final_result_;
  o.turns = turns_;
  o.tokens_in = tokens_in_;
  o.tokens_out = tokens_out_;
  o.cost_usd = cost_;
  return o;
}

}  // namespace mgk::agent
