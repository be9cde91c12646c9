#include "bench_run/attempt_runner.h"

#include <optional>
#include <set>

#include "bench_run/pooled_judge.h"
#include "common/env.h"
#include "common/error.h"

namespace mgk::bench_run {
namespace {

// The provider, saying on the worker's status line that a model call is under way.
class ReportingProvider : public llm::Provider {
 public:
  ReportingProvider(llm::Provider& inner, std::function<void(const std::string&)> status, int turns)
      : inner_(inner), status_(std::move(status)), turns_(turns) {}
  llm::Reply complete(const llm::Request& request) override {
    const size_t turn = request.messages.size() / 2 + 1;  // user, assistant, user, ...
    if (status_) status_("model call, turn " + std::to_string(turn) + "/" + std::to_string(turns_));
    llm::Reply r = inner_.complete(request);
    if (status_) status_("");
    return r;
  }
  std::string name() const override { return inner_.name(); }
  std::optional<llm::PriceMatch> price() const override { return inner_.price(); }

 private:
  llm::Provider& inner_;
  std::function<void(const std::string&)> status_;
  int turns_;
};

}  // namespace

std::string visible_devices(const std::vector<int>& gpus) {
  std::vector<std::string> inherited;
  if (auto v = env("CUDA_VISIBLE_DEVICES")) {
    std::string item;
    for (char c : *v + ",") {
      if (c != ',') item += c;
      else if (!item.empty()) inherited.push_back(item), item.clear();
    }
  }
  std::string out;
  for (int g : std::set<int>(gpus.begin(), gpus.end()))
    out += (out.empty() ? "" : ",") + (size_t(g) < inherited.size() ? inherited[size_t(g)] : std::to_string(g));
  return out;
}

AttemptRunner::AttemptRunner(int64_t run_id, std::map<std::string, ProblemSession> sessions, AttemptDeps deps)
    : run_id_(run_id), sessions_(std::move(sessions)), deps_(deps) {}

int64_t AttemptRunner::run(const WorkItem& item, const AttemptHooks& hooks) const {
  auto it = sessions_.find(item.key.problem);
  if (it == sessions_.end()) throw Error("no session prepared for " + item.key.problem);
  const ProblemSession& ps = it->second;
  const std::string who = item.key.problem + " #" + std::to_string(item.key.sample) + ": ";
  auto status = [&](const std::string& s) {
    if (hooks.status) hooks.status(s.empty() ? who + "working" : who + s);
  };

  agent::AgentSetup setup = ps.setup;
  setup.sample = item.key.sample;
  eval::EvalOptions options = ps.eval;
  GpuPool* per_evaluation_pool = deps_.gpus;
  std::optional<GpuPool::Lease> held;  // shell mode: the attempt's own group
  if (setup.mode == agent::Mode::kShell && deps_.gpus && !options.compile_only) {
    status("waiting for " + std::to_string(options.plan.world_size) + " rank(s) of GPU for the session");
    held.emplace(deps_.gpus->acquire(options.plan.world_size, deps_.interrupt));
    setup.runner.extra_env["CUDA_VISIBLE_DEVICES"] = visible_devices(held->rank_gpus());
    options.gpus = held->rank_gpus();
    per_evaluation_pool = nullptr;
  }
  PooledJudge judge(options, per_evaluation_pool, deps_.interrupt, status);
  ReportingProvider provider(*deps_.provider, status, setup.limits.turns);
  agent::Agent session(std::move(setup),
                       {&provider, &judge, deps_.store, deps_.prompts, deps_.interrupt, deps_.stop, deps_.budget});
  session.on_turn = hooks.on_turn;
  status("starting");
  struct Idle {  // the worker's line goes back to idle however the attempt ends
    const AttemptHooks& hooks;
    ~Idle() {
      if (hooks.status) hooks.status("");
    }
  } idle{hooks};
  // Ctrl-C inside the attempt throws Interrupted on: the agent has left the attempt
  // interrupted, for a resumed run to continue.
  agent::AttemptOutcome out = item.continue_attempt ? session.resume(*item.continue_attempt)
                                                    : session.start(run_id_);
  return out.attempt_id;
}

}  // namespace mgk::bench_run
