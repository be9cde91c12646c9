#include "generate/tune_best.h"

#include "common/error.h"
#include "tune/store_trial_cache.h"
#include "tune/tune_kernel.h"

namespace mgk::generate {

bool tune_best(const agent::AttemptOutcome& o, const eval::EvalOptions& eval_options, store::Store& store,
               const Printer& print) {
  auto not_tuned = [&](const std::string& why) {
    print("not tuned: " + why, {{"event", "tuned"}, {"kernel", nullptr}, {"why", why}});
  };
  if (!o.best_kernel) {
    not_tuned("no correct kernel");
    return true;
  }
  if (eval::ranks_share_gpu(eval_options.gpus) || eval_options.compile_only) {
    not_tuned(std::string(eval_options.compile_only ? "compile only" : "ranks share a GPU") +
              ", so nothing can be timed");
    return true;
  }
  tune::KernelTuneRequest req;
  req.eval = eval_options;
  req.eval.kernel = *o.best_kernel;
  req.out = o.sandbox_dir / "best.tuned.cu";
  req.on_trial = [&print](const tune::Trial& t, const tune::Config&) {
    const bool ok = t.status == tune::TrialStatus::kOk;
    print(std::string("  tune: ") + tune::to_string(t.status) + (ok ? " " + std::to_string(t.time_us) + " us" : ""),
          {{"event", "tune_trial"},
           {"status", tune::to_string(t.status)},
           {"time_us", ok ? nlohmann::json(t.time_us) : nlohmann::json(nullptr)}});
  };
  tune::StoreTrialCache cache(store);
  try {
    tune::KernelTuneResult r = tune::tune_kernel(req, cache);
    if (r.best_kernel)
      print("tuned kernel: " + r.best_kernel->string(), {{"event", "tuned"}, {"kernel", r.best_kernel->string()}});
    else
      not_tuned(r.report.message);
    return r.report.stop != tune::StopReason::kInterrupted;
  } catch (const UsageError& e) {  // e.g. the kernel declares no tunables
    not_tuned(e.what());
    return true;
  }
}

}  // namespace mgk::generate
