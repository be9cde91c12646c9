#include "generate/output.h"

#include <cstdio>

#include "agent/feedback.h"
#include "common/log.h"

namespace mgk::generate {

std::string money(double usd) {
  char b[32];
  std::snprintf(b, sizeof b, "$%.4f", usd);
  return b;
}

std::string tokens(int64_t n) {
  char b[32];
  if (n >= 10000) std::snprintf(b, sizeof b, "%.1fk", double(n) / 1000);
  else std::snprintf(b, sizeof b, "%lld", static_cast<long long>(n));
  return b;
}

nlohmann::json usd_or_null(bool priced, double usd) { return priced ? nlohmann::json(usd) : nlohmann::json(nullptr); }

void announce_price(const llm::Provider& provider) {
  auto p = provider.price();
  if (!p) {
    log::warning("no price is known for " + provider.name() +
                 ": its cost is not counted (shown as '?') and not limited");
  } else if (!p->exact) {
    char rates[96];
    std::snprintf(rates, sizeof rates, "$%g in / $%g out per million tokens", p->price.input,
                  p->price.output);
    log::info("pricing " + provider.name() + " as '" + p->entry + "' (" + rates + ")");
  }
}

void print_outcome(const agent::AttemptOutcome& out, int64_t run_id, bool priced, const Printer& print) {
  const std::string cost = priced ? money(out.cost_usd) : "$?";
  const bool interrupted = out.reason == agent::ExitReason::kInterrupted;
  if (print.json) {
    print("", {{"event", "ended"}, {"attempt", out.attempt_id}, {"run", run_id},
               {"exit_reason", agent::to_string(out.reason)}, {"message", out.message}, {"turns", out.turns},
               {"tokens_in", out.tokens_in}, {"tokens_out", out.tokens_out},
               {"cost_usd", usd_or_null(priced, out.cost_usd)},
               {"final_verdict", out.final_result ? nlohmann::json(results::to_string(out.final_result->verdict))
                                                  : nlohmann::json(nullptr)},
               {"best_kernel", out.best_kernel ? nlohmann::json(out.best_kernel->string()) : nlohmann::json(nullptr)},
               {"best_speedup", out.best_speedup ? nlohmann::json(*out.best_speedup) : nlohmann::json(nullptr)},
               {"sandbox", out.sandbox_dir.string()}, {"resumable", interrupted}});
    return;
  }
  std::cout << "ended: " << agent::to_string(out.reason) << (out.message.empty() ? "" : ": " + out.message)
            << "  (" << out.turns << " turns, " << tokens(out.tokens_in) << " in / " << tokens(out.tokens_out)
            << " out, " << cost << ")\n";
  if (out.final_result)
    std::cout << "final kernel.cu: " << agent::verdict_summary(*out.final_result) << "\n";
  if (out.best_kernel) {
    char speed[64] = "not timed: ranks share a GPU";
    if (out.best_speedup) std::snprintf(speed, sizeof speed, "slowest size %.2fx", *out.best_speedup);
    std::cout << "best kernel: " << out.best_kernel->string() << "  (" << speed << ")\n";
  } else {
    std::cout << "best kernel: none correct (files in " << out.sandbox_dir.string() << ")\n";
  }
  std::cout << "attempt " << out.attempt_id << "  ('mgk show " << out.attempt_id << "'"
            << (interrupted ? ", 'mgk generate --resume " + std::to_string(out.attempt_id) + "'" : std::string())
            << ")\n";
}

}  // namespace mgk::generate
