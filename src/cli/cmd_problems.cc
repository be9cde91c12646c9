// mgk problems [show NAME]: the suite.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/file.h"
#include "common/format.h"
#include "common/log.h"
#include "problems/catalog.h"
#include "problems/resolve.h"

namespace mgk::cli {

namespace {

struct ProblemsArgs {
  std::string pattern = "*";
  std::string show;
  int world = 0;  // 0: the problem's smallest world
  bool json = false;
};

std::string human_bytes(double b) {
  char buf[32];
  if (b >= 1 << 30) snprintf(buf, sizeof(buf), "%.1f GiB", b / (1 << 30));
  else if (b >= 1 << 20) snprintf(buf, sizeof(buf), "%.1f MiB", b / (1 << 20));
  else if (b >= 1 << 10) snprintf(buf, sizeof(buf), "%.1f KiB", b / (1 << 10));
  else snprintf(buf, sizeof(buf), "%.0f B", b);
  return buf;
}

bool has_expert(const problems::Spec& s) { return std::filesystem::exists(s.expert_path()); }

// The ranks `show` lists: every one (a rank's shapes and cost differ with it: uneven chunks).
std::vector<int> shown_ranks(int world) {
  std::vector<int> ranks(size_t(std::max(world, 0)));
  for (int rank = 0; rank < world; ++rank) ranks[size_t(rank)] = rank;
  return ranks;
}

nlohmann::json tensor_json(const problems::ResolvedTensor& t) {
  nlohmann::json j = {{"name", t.name},
                      {"dtype", problems::to_string(t.dtype)},
                      {"shape", t.shape},
                      {"bytes", t.numel * problems::dtype_bytes(t.dtype)},
                      {"symmetric", t.symmetric}};
  if (t.spec && !t.spec->in_place_of.empty()) j["in_place_of"] = t.spec->in_place_of;
  return j;
}

void show_json(const problems::Spec& s, const ProblemsArgs& a) {
  nlohmann::json sizes = nlohmann::json::array();
  for (const auto& size : s.size_names) {
    nlohmann::json dims = nlohmann::json::object(), ranks = nlohmann::json::array();
    for (const auto& [k, v] : problems::resolve(s, size, "", a.world, 0).dims)
      if (k != "R") dims[k] = (long long)v;
    for (int rank : shown_ranks(a.world)) {
      auto r = problems::resolve(s, size, "", a.world, rank);
      nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
      for (const auto& t : r.inputs) inputs.push_back(tensor_json(t));
      for (const auto& t : r.outputs) outputs.push_back(tensor_json(t));
      ranks.push_back({{"rank", rank},
                       {"inputs", inputs},
                       {"outputs", outputs},
                       {"cost", {{"flops", r.cost.flops},
                                 {"hbm_bytes", r.cost.hbm_bytes},
                                 {"link_bytes", r.cost.link_bytes}}}});
    }
    sizes.push_back({{"size", size}, {"dims", dims}, {"ranks", ranks}});
  }
  nlohmann::json requirements = nlohmann::json::array();
  for (const auto& q : s.requirements) requirements.push_back({{"expr", q.expr}, {"why", q.why}});
  nlohmann::json j = {{"name", s.name},
                      {"title", s.title},
                      {"pkb_id", s.pkb_id ? nlohmann::json(*s.pkb_id) : nlohmann::json(nullptr)},
                      {"min_world", s.min_world},
                      {"max_world", s.max_world},
                      {"world", a.world},
                      {"dtypes", s.dtypes},
                      {"default_sizes", s.default_sizes},
                      {"structure_check", {{"worlds", s.structure_check.worlds}, {"why", s.structure_check.why}}},
                      {"requires", requirements},
                      {"statement", read_file(s.statement_path(), "problem statement")},
                      {"sizes", sizes},
                      {"dir", s.dir.string()},
                      {"expert", has_expert(s)}};
  std::cout << j.dump(2) << "\n";
}

void show(ProblemsArgs a) {
  problems::Spec s = problems::load(a.show);
  if (a.world == 0) a.world = s.min_world;
  if (a.world < s.min_world || a.world > s.max_world)
    throw UsageError(s.name + " runs at " + std::to_string(s.min_world) + ".." + std::to_string(s.max_world) +
                     " ranks, not --world " + std::to_string(a.world));
  if (a.json) return show_json(s, a);
  std::cout << s.name << ": " << s.title << (s.pkb_id ? " (ParallelKernelBench #" + std::to_string(*s.pkb_id) + ")" : "")
            << "\n";
  std::cout << "world sizes " << s.min_world << ".." << s.max_world << ", dtypes " << join(s.dtypes, ",")
            << ", default sizes " << join(s.default_sizes, ",") << "\n";
  for (const auto& q : s.requirements)
    std::cout << "requires " << q.expr << " (" << q.why << ")\n";
  std::cout << "worlds checked: the evaluation's own (timed)";
  for (int w : s.structure_check.worlds) std::cout << ", " << w;
  if (!s.structure_check.worlds.empty())
    std::cout << " when the evaluation's is smaller (checked, not timed, ranks sharing GPUs: "
              << s.structure_check.why << ")";
  std::cout << "\n";
  const auto tails = problems::tail_sizes(s, s.default_sizes, "", a.world);
  std::cout << (tails.empty() ? "tails: NONE of the default sizes has a byte count that is not a multiple of 16"
                              : "tails: the default sizes include " + join(tails, ",") +
                                    ", not a multiple of 16 bytes: kernels that forget the tail fail there")
            << "\n\n";
  std::cout << read_file(s.statement_path(), "problem statement") << "\n";
  for (const auto& size : s.size_names) {
    auto r0 = problems::resolve(s, size, "", a.world, 0);
    std::cout << "size " << size << " at W=" << a.world << ":";
    for (const auto& [k, v] : r0.dims)
      if (k != "R") std::cout << " " << k << "=" << (long long)v;
    std::cout << "\n";
    for (int rank : shown_ranks(a.world)) {
      auto r = problems::resolve(s, size, "", a.world, rank);
      std::cout << "  rank " << rank << ":";
      for (const auto* group : {&r.inputs, &r.outputs})
        for (const auto& t : *group) {
          std::cout << " " << t.name << "[";
          for (size_t d = 0; d < t.shape.size(); ++d) std::cout << (d ? "," : "") << t.shape[d];
          std::cout << "] " << problems::to_string(t.dtype) << " " << human_bytes(double(t.numel) * problems::dtype_bytes(t.dtype))
                    << (t.symmetric ? " sym" : "")
                    << (t.spec && !t.spec->in_place_of.empty() ? " (in place of " + t.spec->in_place_of + ")" : "") << ";";
        }
      std::cout << " cost: " << r.cost.flops << " flop, HBM " << human_bytes(r.cost.hbm_bytes) << ", link "
                << human_bytes(r.cost.link_bytes) << "\n";
    }
  }
  std::cout << "\nfiles: " << s.dir.string() << " (problem.json, reference.cu, statement.md"
            << (has_expert(s) ? ", expert.cu" : "") << ")\n";
}

// The suite grouped by category (the names come sorted, so a category's rows are together),
// one aligned table: each column as wide as its widest cell, two spaces apart.
void print_table(const std::vector<problems::Spec>& specs) {
  using Row = std::vector<std::string>;
  const Row header = {"problem", "pkb", "world", "sizes", "dtypes", "expert", "title"};
  std::vector<std::pair<std::string, Row>> rows;  // category, cells
  for (const auto& s : specs)
    rows.push_back({s.category,
                    {s.name, s.pkb_id ? std::to_string(*s.pkb_id) : "-",
                     std::to_string(s.min_world) + ".." + std::to_string(s.max_world), join(s.size_names, ","),
                     s.dtypes.empty() ? "-" : join(s.dtypes, ","), has_expert(s) ? "yes" : "no", s.title}});
  std::vector<size_t> width(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& [category, row] : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  auto print = [&](const Row& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += c + 1 < row.size() ? row[c] + std::string(width[c] - row[c].size() + 2, ' ') : row[c];
    std::cout << line << "\n";
  };
  print(header);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i == 0 || rows[i].first != rows[i - 1].first) {
      size_t n = 0;
      for (const auto& r : rows) n += r.first == rows[i].first;
      std::cout << "\n" << rows[i].first << " (" << n << ")\n";
    }
    print(rows[i].second);
  }
  std::printf("\n%zu problem(s); 'mgk problems show NAME' for details\n", specs.size());
}

// Lists what loads; a problem that does not is named (with why) and the exit code says so,
// but the rest of the suite is still listed.
ExitCode list(const ProblemsArgs& a) {
  auto names = problems::match(a.pattern);
  if (names.empty()) throw UsageError("no problem matches '" + a.pattern + "' ('mgk problems' lists them all)");
  std::vector<problems::Spec> specs;
  std::vector<std::pair<std::string, std::string>> broken;  // name, error
  for (const auto& n : names) {
    try {
      specs.push_back(problems::load(n));
    } catch (const Error& e) {
      broken.emplace_back(n, e.what());
    }
  }
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& s : specs)
      j.push_back({{"name", s.name}, {"title", s.title}, {"category", s.category}, {"pkb_id", s.pkb_id ? *s.pkb_id : 0},
                   {"min_world", s.min_world}, {"max_world", s.max_world}, {"dtypes", s.dtypes}, {"sizes", s.size_names},
                   {"default_sizes", s.default_sizes}, {"structure_worlds", s.structure_check.worlds},
                   {"expert", has_expert(s)}});
    for (const auto& [name, error] : broken) j.push_back({{"name", name}, {"error", error}});
    std::cout << j.dump(2) << "\n";
  } else {
    print_table(specs);
  }
  for (const auto& [name, error] : broken) log::error("problem " + name + " could not be read: " + error);
  return broken.empty() ? ExitCode::kOk : ExitCode::kUsage;
}

}  // namespace

void add_problems_command(CLI::App& root, Globals& g) {
  auto a = std::make_shared<ProblemsArgs>();
  CLI::App* c = root.add_subcommand("problems", "List the benchmark suite, or show one problem");
  c->add_option("pattern", a->pattern, "Glob over names, e.g. 'collectives/*' or '*reduce*'")->capture_default_str();
  c->add_flag("--json", a->json, "JSON output");
  CLI::App* s = c->add_subcommand("show", "Everything about one problem: statement, tensors per rank, sizes, cost model");
  s->add_option("name", a->show, "Problem name")->required();
  s->add_option("--world", a->world, "World size to resolve shapes for (default: the problem's smallest)")
      ->check(at_least(1));
  s->add_flag("--json", a->json, "JSON output");
  c->callback([a, &g, s] {
    if (s->parsed()) {
      show(*a);
      g.exit_code = ExitCode::kOk;
    } else {
      g.exit_code = list(*a);
    }
  });
}

}  // namespace mgk::cli
