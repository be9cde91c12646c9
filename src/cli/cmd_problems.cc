// mgk problems [show NAME]: the suite.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "common/file.h"
#include "problems/catalog.h"
#include "problems/resolve.h"

namespace mgk::cli {

namespace {

struct ProblemsArgs {
  std::string pattern = "*";
  std::string show;
  int world = 2;
  bool json = false;
};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

std::string human_bytes(double b) {
  char buf[32];
  if (b >= 1 << 30) snprintf(buf, sizeof(buf), "%.1f GiB", b / (1 << 30));
  else if (b >= 1 << 20) snprintf(buf, sizeof(buf), "%.1f MiB", b / (1 << 20));
  else if (b >= 1 << 10) snprintf(buf, sizeof(buf), "%.1f KiB", b / (1 << 10));
  else snprintf(buf, sizeof(buf), "%.0f B", b);
  return buf;
}

void show(const ProblemsArgs& a) {
  problems::Spec s = problems::load(a.show);
  std::cout << s.name << ": " << s.title << (s.pkb_id ? " (ParallelKernelBench #" + std::to_string(*s.pkb_id) + ")" : "")
            << "\n";
  std::cout << "world sizes " << s.min_world << ".." << s.max_world << ", dtypes " << join(s.dtypes)
            << ", default sizes " << join(s.default_sizes) << "\n";
  const auto tails = problems::tail_sizes(s, s.default_sizes, "", a.world);
  std::cout << (tails.empty() ? "tails: NONE of the default sizes has a byte count that is not a multiple of 16"
                              : "tails: the default sizes include " + join(tails) +
                                    ", not a multiple of 16 bytes: kernels that forget the tail fail there")
            << "\n\n";
  std::cout << read_file(s.statement_path(), "problem statement") << "\n";
  for (const auto& size : s.size_names) {
    auto r0 = problems::resolve(s, size, "", a.world, 0);
    std::cout << "size " << size << " at W=" << a.world << ":";
    for (const auto& [k, v] : r0.dims)
      if (k != "R") std::cout << " " << k << "=" << (long long)v;
    std::cout << "\n";
    for (int rank = 0; rank < a.world; ++rank) {
      auto r = problems::resolve(s, size, "", a.world, rank);
      if (rank > 0 && a.world > 2 && rank < a.world - 1) continue;  // first, second, last
      std::cout << "  rank " << rank << ":";
      for (const auto* group : {&r.inputs, &r.outputs})
        for (const auto& t : *group) {
          std::cout << " " << t.name << "[";
          for (size_t d = 0; d < t.shape.size(); ++d) std::cout << (d ? "," : "") << t.shape[d];
          std::cout << "] " << problems::to_string(t.dtype) << " " << human_bytes(double(t.numel) * problems::dtype_bytes(t.dtype))
                    << (t.symmetric ? " sym" : "") << ";";
        }
      std::cout << " cost: " << r.cost.flops << " flop, HBM " << human_bytes(r.cost.hbm_bytes) << ", link "
                << human_bytes(r.cost.link_bytes) << "\n";
    }
  }
  std::cout << "\nfiles: " << s.dir.string() << " (problem.json, reference.cu, statement.md"
            << (std::filesystem::exists(s.expert_path()) ? ", expert.cu" : "") << ")\n";
}

void list(const ProblemsArgs& a) {
  auto names = problems::match(a.pattern);
  if (names.empty()) throw UsageError("no problem matches '" + a.pattern + "' ('mgk problems' lists them all)");
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& n : names) {
      auto s = problems::load(n);
      j.push_back({{"name", n}, {"title", s.title}, {"category", s.category}, {"pkb_id", s.pkb_id ? *s.pkb_id : 0},
                   {"min_world", s.min_world}, {"max_world", s.max_world}, {"dtypes", s.dtypes}, {"sizes", s.size_names},
                   {"expert", std::filesystem::exists(s.expert_path())}});
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::printf("%-32s %-5s %-10s %-9s %-28s %-6s %s\n", "problem", "pkb", "category", "world", "sizes", "expert", "title");
  for (const auto& n : names) {
    auto s = problems::load(n);
    std::string world = std::to_string(s.min_world) + ".." + std::to_string(s.max_world);
    std::printf("%-32s %-5s %-10s %-9s %-28s %-6s %s\n", n.c_str(), s.pkb_id ? std::to_string(*s.pkb_id).c_str() : "-",
                s.category.c_str(), world.c_str(), join(s.size_names).c_str(),
                std::filesystem::exists(s.expert_path()) ? "yes" : "no", s.title.c_str());
  }
  std::printf("%zu problem(s); 'mgk problems show NAME' for details\n", names.size());
}

}  // namespace

void add_problems_command(CLI::App& root, Globals& g) {
  auto a = std::make_shared<ProblemsArgs>();
  CLI::App* c = root.add_subcommand("problems", "List the benchmark suite, or show one problem");
  c->add_option("pattern", a->pattern, "Glob over names, e.g. 'collectives/*' or '*reduce*'")->capture_default_str();
  c->add_flag("--json", a->json, "JSON output");
  CLI::App* s = c->add_subcommand("show", "Everything about one problem: statement, tensors per rank, sizes, cost model");
  s->add_option("name", a->show, "Problem name")->required();
  s->add_option("--world", a->world, "World size to resolve shapes for")->capture_default_str();
  c->callback([a, &g, s] {
    if (s->parsed()) show(*a);
    else list(*a);
    g.exit_code = ExitCode::kOk;
  });
}

}  // namespace mgk::cli
