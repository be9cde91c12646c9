// The agent loop: one attempt at one problem with one model, in refine or shell mode.
//   run  -> step until a limit or an exit           (limits checked before every model call)
//   step -> query the model, then execute the reply (judge a kernel / run a command)
// Every turn is stored as soon as it completes (messages, reply, tokens, cost, latency,
// action, kernel, evaluation, feedback), so Ctrl-C or a crash loses nothing finished and
// `resume` continues from the stored conversation.
#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/config.h"
#include "agent/judge.h"
#include "agent/problem_prompt.h"
#include "agent/prompt_library.h"
#include "llm/provider.h"
#include "agent/shared_budget.h"
#include "sandboxing/runner.h"
#include "store/store.h"

namespace mgk::agent {

struct AgentSetup {
  std::string problem;  // "collectives/all_reduce"
  int sample = 0;       // which of a bench's samples of this problem (stored with the attempt)
  Mode mode = Mode::kRefine;
  int world_size = 2;
  Limits limits;
  Sampling sampling;
  InitialPrompt prompt;  // the opening; a resumed attempt uses its stored conversation
  // Written into the sandbox directory when the attempt starts (shell mode: the reference,
  // the problem text), by file name.
  std::map<std::string, std::string> sandbox_files;
  // Shell mode: links made in the sandbox, by name, to folders the model reads (the
  // problem's, the primitives'), so the prompt names them the same on every machine.
  std::map<std::string, std::filesystem::path> sandbox_links;
  // Shell mode: how commands run. The agent sets sandbox_dir and cancel, and points
  // MGK_HOME and MGK_DB inside the sandbox (the trusted store is never writable there).
  sandboxing::RunnerOptions runner;
  double command_timeout_s = kCommandTimeoutS;
  nlohmann::json config = nlohmann::json::object();  // stored with the attempt
};

// The collaborators; all outlive the Agent.
struct AgentDeps {
  llm::Provider* provider = nullptr;
  Judge* judge = nullptr;
  store::Store* store = nullptr;
  const PromptLibrary* prompts = nullptr;
  const std::atomic<bool>* interrupt = nullptr;  // set by SIGINT: finish the step, then stop
  // Set by the caller (a bench whose budget is spent): end before the next model call, as
  // interrupted (resumable), without cancelling a command or evaluation in progress.
  const std::atomic<bool>* stop = nullptr;
  // A budget shared with other attempts (a bench run's): every call holds its worst case
  // there first; a call that does not fit is not made. Null: none.
  SharedBudget* budget = nullptr;
};

// One line of progress, given to on_turn after each stored turn.
struct TurnReport {
  int index = 0;        // 0-based
  Action action = Action::kKernel;
  std::string outcome;  // "correct 1.42x", "compile_error", "exit 0", "no cuda block", ...
  std::optional<double> speedup;
  int64_t tokens_in = 0, tokens_out = 0;
  double cost_usd = 0, total_cost_usd = 0;
};

struct AttemptOutcome {
  int64_t attempt_id = 0;
  ExitReason reason = ExitReason::kTurnsExhausted;
  std::string message;  // for api_error and infrastructure: the one line saying why
  std::filesystem::path sandbox_dir;
  std::optional<std::filesystem::path> best_kernel;  // <sandbox>/best.cu, when one passed
  std::optional<double> best_speedup;                // its slowest speedup over the sizes
  std::optional<results::EvalResult> final_result;      // shell mode: the judgement of kernel.cu
  int turns = 0;
  int64_t tokens_in = 0, tokens_out = 0;
  double cost_usd = 0;
};

// A cost limit needs a price: UsageError for a limit above 0 on a model whose price is
// unknown, saying how to give one (the config file) or to lift the limit (0).
void check_cost_limit(const llm::Provider& provider, const Limits& limits);
// The same for limits named by their flags ({"--attempt-max-cost", 3}, {"--max-cost", 50}):
// the line names each non-zero one and the flags that lift them ("pass --attempt-max-cost 0").
struct CostLimit {
  std::string flag;
  double usd = 0;
};
void check_cost_limits(const llm::Provider& provider, const std::vector<CostLimit>& limits);

// The stored attempt `attempt_id`, checked for a resume (the one place these checks are
// made, for `mgk generate --resume` before anything is built and for Agent::resume):
// NotFoundError when the store has none; UsageError when it was submitted, or is of
// another problem, model or mode than one given (empty / nullopt: not checked).
struct ResumeExpectation {
  std::string problem, model;
  std::optional<Mode> mode;
};
store::AttemptSummary resumable_attempt(store::Store& store, int64_t attempt_id,
                                        const ResumeExpectation& expect = {});

// The sandbox directory name of an attempt: its id and the start of its run's uuid, so
// that stores sharing one MGK_HOME (one per Slurm task) never share a sandbox.
std::string sandbox_name(int64_t attempt_id, const std::string& run_uuid);

class Agent {
 public:
  // Throws as check_cost_limit does.
  Agent(AgentSetup setup, AgentDeps deps);
  ~Agent();

  std::function<void(const TurnReport&)> on_turn;

  // Begins a new attempt under `run_id` and runs it to its end.
  AttemptOutcome start(int64_t run_id);
  // Continues a stored attempt (any but a submitted one, of this session's mode: see
  // resumable_attempt) from its stored conversation. A last reply stored but never acted on
  // (killed, or Ctrl-C, while its kernel was judged) is acted on first, unasked and unpaid.
  AttemptOutcome resume(int64_t attempt_id);
  // Both end the attempt with ExitReason::kInfrastructure, its reply and feedback stored,
  // when the evaluator cannot judge a kernel (an infrastructure verdict, or the judge
  // throws): the model is not billed again for a failure that is not its kernel's. Ctrl-C
  // during a model call ends the call at once (kInterrupted; the call is not a turn).
  // The stored attempt this session works on; 0 before start/resume has begun one.
  int64_t attempt_id() const { return attempt_id_; }

 private:
  struct StepResult;
  AttemptOutcome run();
  std::optional<ExitReason> limit_reached() const;
  void step();
  // What a reply cost this process: nothing when a resume acts on one an earlier process paid for.
  struct Paid {
    int64_t tokens_in = 0, tokens_out = 0;
    double cost_usd = 0;
  };
  // The stored (pending) reply of turn `index` acted on: its kernel judged or its command
  // run, and the turn completed with what came of it.
  void act_on(int index, const std::string& reply_text, const Paid& paid);
  void answered(int index, const StepResult& r, const std::string& feedback, const Paid& paid);
  StepResult truncated_reply();
  std::string finished_feedback(int index, const StepResult& r) const;
  bool ctrl_c() const { return deps_.interrupt && deps_.interrupt->load(); }
  llm::Reply query();
  StepResult execute_refine(const std::string& reply_text, int index);
  StepResult execute_shell(const std::string& reply_text);
  StepResult format_error(const std::string& problem, bool shell_mode);
  results::EvalResult judge_kernel(const std::filesystem::path& file, const std::string& hash,
                                int index);
  std::string limits_warning(int next_index) const;
  void prepare_sandbox();
  AttemptOutcome finish(ExitReason reason);

  AgentSetup setup_;
  AgentDeps deps_;
  std::unique_ptr<sandboxing::Runner> runner_;
  int64_t run_id_ = 0;
  int64_t attempt_id_ = 0;
  std::filesystem::path sandbox_;
  std::string system_;
  std::vector<llm::Message> history_;
  std::vector<llm::Message> unsent_;  // appended since the last stored turn
  int turns_ = 0;
  int format_errors_in_a_row_ = 0;
  int64_t tokens_in_ = 0, tokens_out_ = 0;
  double cost_ = 0;
  double started_ = 0;  // steady clock seconds
  std::optional<ExitReason> exit_;
  std::optional<int> pending_turn_;  // resumed with its last reply not yet acted on
  std::string pending_reply_;
  std::string exit_message_;
  std::optional<std::string> best_hash_;
  std::optional<double> best_speedup_;
  std::optional<results::EvalResult> final_result_;
  std::map<std::string, int> first_turn_of_;  // kernel hash -> the turn index that first sent it
};

}  // namespace mgk::agent
