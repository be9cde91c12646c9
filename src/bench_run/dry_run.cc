#include "bench_run/dry_run.h"

#include <set>

#include "bench_run/gpu_pool.h"
#include "common/format.h"

namespace mgk::bench_run {
namespace {

// A rough count (about four characters a token for English and code): the provider's
// tokenizer decides the real one.
long long estimated_tokens(long long chars) { return (chars + 3) / 4; }

}  // namespace

std::string group_line(int world, const std::vector<std::vector<int>>& groups, bool compile_only) {
  const std::string ranks = std::to_string(world) + " rank" + (world == 1 ? "" : "s");
  if (compile_only) return ranks + ": no GPU (compile only: nothing runs)";
  std::string line = ranks + ":";
  bool shared = false;
  for (const auto& g : groups) {
    line += " [" + bench_run::gpu_list(g) + "]";
    shared |= std::set<int>(g.begin(), g.end()).size() < g.size();
  }
  line += "  (" + std::to_string(groups.size()) + " evaluation" + (groups.size() == 1 ? "" : "s") + " at a time";
  if (shared) line += "; ranks share a GPU: checked, not timed";
  return line + ")";
}

void print_dry_run(std::ostream& out, const DryRun& d) {
  const size_t attempts = d.problems.size() * size_t(d.samples);
  out << "dry run: nothing is sent to " << d.model << " and nothing is evaluated\n";
  out << "attempts: " << attempts << " (" << d.problems.size() << " problem(s) x " << d.samples << " sample(s)), "
      << d.mode << " mode, up to " << d.turns << (d.mode == "shell" ? " steps" : " turns") << " each\n";
  for (const auto& [name, world] : d.problems) out << "  " << name << "  (" << world << " ranks)\n";
  out << "GPU groups:\n";
  for (const auto& g : d.groups) out << "  " << g << "\n";
  out << "first prompt of " << d.example << ":\n";
  out << "----- system -----\n" << d.prompt.system << "\n----- user -----\n" << d.prompt.user << "\n----- end -----\n";
  const long long first = estimated_tokens(static_cast<long long>(d.prompt.system.size() + d.prompt.user.size()));
  const long long all = estimated_tokens(d.first_prompts_chars);
  out << "estimated tokens (characters / 4, an estimate: the provider's tokenizer decides): this first call ~"
      << first << " in, up to " << d.max_tokens << " out; the first calls of all " << attempts << " attempt(s) ~"
      << all << " in. Later turns resend the conversation, so a whole attempt costs several times its first call.\n";
  const size_t colon = d.model.find(':');
  const std::optional<llm::PriceMatch> match =
      d.llm && colon != std::string::npos ? d.llm->price(d.model.substr(0, colon), d.model.substr(colon + 1))
                                          : std::nullopt;
  if (match)
    out << "at " << d.model << "'s list price (" << match->entry << ") the first calls' input is about $"
        << fixed(double(all) * match->price.input / 1e6, 2) << " (outputs at $" << fixed(match->price.output, 2)
        << " per million tokens)\n";
  else
    out << "no price is known for " << d.model << ": its cost cannot be estimated (give one in the config)\n";
}

}  // namespace mgk::bench_run
