#include "agent/problem_prompt.h"

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "common/file.h"
#include "common/env.h"
#include "common/error.h"
#include "common/text.h"
#include "problems/catalog.h"
#include "problems/resolve.h"
#include "agent/rules_prompt.h"

namespace mgk::agent {
namespace fs = std::filesystem;

namespace {


std::string init_text(const problems::InputInit& init) {
  std::string out = init.dist + "(" + (init.a_expr.empty() ? plain_number(init.a) : init.a_expr) + ", " +
                    (init.b_expr.empty() ? plain_number(init.b) : init.b_expr) +
                    (init.dist == "zipf" ? ", exponent " + plain_number(init.exponent) : "") + ")";
  if (init.dist == "zipf") out += ": low + j with probability falling as (j + 1) ** -" + plain_number(init.exponent);
  // The special rows (rows of row_length elements, the same on every rank, their place
  // drawn afresh every call).
  auto nth = [](long long k) {
    const long long d = k % 10, t = k % 100;
    return std::to_string(k) + (t / 10 == 1 ? "th" : d == 1 ? "st" : d == 2 ? "nd" : d == 3 ? "rd" : "th");
  };
  if (init.zero_every) out += "; every " + nth(init.zero_every) + " row (of " + init.row_length + ") all zero";
  if (init.tiny_every)
    out += "; every " + nth(init.tiny_every) + " row (of " + init.row_length + ") times " + plain_number(init.tiny);
  if (init.massive_every)
    out += "; every " + nth(init.massive_every) + " row (of " + init.row_length + ") times " + plain_number(init.massive);
  if (init.zero_every || init.tiny_every || init.massive_every)
    out += " (the same rows on every rank, drawn afresh each call)";
  return out;
}

std::string tensor_rows(const std::vector<problems::TensorSpec>& tensors, const std::string& kind,
                        const std::string& dtype) {
  std::string out;
  for (const auto& t : tensors) {
    std::string shape;
    for (const auto& e : t.shape) shape += (shape.empty() ? "" : ", ") + e;
    out += "| " + kind + " | `" + t.name + "` | " + (t.dtype == "T" ? dtype : t.dtype) + " | [" +
           shape + "] | " + (t.symmetric ? "yes" : "no") + " | " +
           (kind == "input"           ? init_text(t.init)
            : t.in_place_of.empty() ? std::string("-")
                                    : "in place: the buffer of input `" + t.in_place_of + "`, updated") +
           " | " + t.description + " |\n";
  }
  return out;
}

std::string tensors_table(const problems::Spec& spec, const std::string& dtype) {
  return "| | name | dtype | shape | symmetric | initial values | meaning |\n"
         "|---|---|---|---|---|---|---|\n" +
         tensor_rows(spec.inputs, "input", dtype) + tensor_rows(spec.outputs, "output", dtype);
}

std::string sizes_list(const problems::Spec& spec, int world_size) {
  const auto& names = spec.default_sizes.empty() ? spec.size_names : spec.default_sizes;
  std::string out;
  for (const auto& name : names) {
    expr::Vars dims = problems::size_dims(spec, name, world_size);
    std::string d;
    for (const auto& [k, v] : dims)
      if (k != "W") d += (d.empty() ? "" : ", ") + k + " = " + plain_number(v);
    out += "- " + name + ": " + d + "\n";
  }
  return out;
}

std::string tolerance_text(const PromptLibrary& prompts, const problems::Spec& spec) {
  std::string out;
  for (const auto& o : spec.outputs) {
    const auto& t = o.tolerance;
    TemplateVars v{{"output", o.name},
                   {"exact", t.kind == problems::ToleranceKind::kExact ? "1" : ""},
                   {"rounding", t.kind == problems::ToleranceKind::kRounding ? "1" : ""},
                   {"allclose", t.kind == problems::ToleranceKind::kAllclose ? "1" : ""},
                   {"factor", t.factor},
                   {"atol", plain_number(t.atol)},
                   {"rtol", plain_number(t.rtol)}};
    out += prompts.render("parts/tolerance", v);
  }
  return out;
}

std::string topology_text(const PromptLibrary& prompts, const Topology& t) {
  char bw[64] = "";
  if (t.link_gbps) std::snprintf(bw, sizeof bw, "%.0f GB/s per direction", *t.link_gbps);
  return prompts.render("parts/topology", {{"world_size", std::to_string(t.world_size)},
                                           {"gpu_model", t.gpu_model},
                                           {"sm_count", t.sm_count > 0 ? std::to_string(t.sm_count) : ""},
                                           {"link_bandwidth", bw},
                                           {"link_source", t.link_source}});
}

// `file`'s text followed by every header of the suite it includes with quotes (problems that
// share code keep it beside them, e.g. problems/moe/moe_common.cuh): the model reads the
// reference as the baseline it must beat, and a reference.cu of one #include says nothing.
// Each header once, in the order first included; mgk/ headers come from the include path.
std::string with_suite_headers(const std::filesystem::path& file, const std::string& what) {
  namespace fs = std::filesystem;
  const fs::path suite = fs::weakly_canonical(problems::problems_dir());
  const std::regex quoted(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::set<fs::path> seen;
  std::string appended;
  auto scan = [&](auto&& self, const fs::path& from, const std::string& text) -> void {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, quoted)) continue;
      const fs::path header = fs::weakly_canonical(from.parent_path() / m[1].str());
      const auto rel = header.lexically_relative(suite);
      if (rel.empty() || *rel.begin() == ".." || !fs::is_regular_file(header) || !seen.insert(header).second) continue;
      const std::string body = read_file(header, "a header the reference includes");
      appended += "\n// ---- problems/" + rel.generic_string() + " (included above) ----\n" + body;
      self(self, header, body);
    }
  };
  const std::string text = read_file(file, what);
  scan(scan, file, text);
  return text + appended;
}

}  // namespace

std::string for_the_model(const std::string& text, const std::string& what) {
  static const std::string open = "mgk-prompt: omit {", close = "mgk-prompt: omit }";
  std::istringstream lines(text);
  std::string out;
  int line_no = 0, opened_at = 0;
  bool blank = false;
  for (std::string line; std::getline(lines, line);) {
    ++line_no;
    if (line.find(open) != std::string::npos) {
      if (opened_at) throw Error(what + ":" + std::to_string(line_no) + ": '" + open + "' inside another (line " +
                                 std::to_string(opened_at) + ")");
      opened_at = line_no;
      continue;
    }
    if (line.find(close) != std::string::npos) {
      if (!opened_at) throw Error(what + ":" + std::to_string(line_no) + ": '" + close + "' without its '" + open + "'");
      opened_at = 0;
      continue;
    }
    if (opened_at) continue;
    const bool is_blank = line.find_first_not_of(" \t") == std::string::npos;
    if (is_blank && blank) continue;  // what was cut leaves one blank line, not several
    blank = is_blank;
    out += line + "\n";
  }
  if (opened_at) throw Error(what + ":" + std::to_string(opened_at) + ": '" + open + "' is never closed");
  return out;
}

PromptTexts read_prompt_texts(const problems::Spec& spec) {
  PromptTexts t;
  const fs::path abi = root_dir() / "src" / "abi" / "mgk" / "abi.h";
  t.abi = for_the_model(read_file(abi, "the solution ABI"), abi.string());
  t.primitives_guide = read_file(root_dir() / "primitives" / "README.md", "the primitives guide");
  t.statement = read_file(spec.statement_path(), "the problem statement");
  t.reference_source = with_suite_headers(spec.reference_path(), "the reference solution");
  return t;
}

// The worlds above this one the evaluator also checks the kernel at (problems::StructureCheck);
// empty when there are none.
std::string structure_check_text(const PromptLibrary& prompts, const problems::Spec& spec, int world_size) {
  std::string worlds;
  for (int w : spec.structure_check.worlds)
    if (w > world_size) worlds += (worlds.empty() ? "" : ", ") + std::to_string(w);
  if (worlds.empty()) return "";
  return chomp(prompts.render("parts/structure_check", {{"world_size", std::to_string(world_size)},
                                                        {"worlds", worlds},
                                                        {"why", spec.structure_check.why}}));
}

std::string render_problem(const PromptLibrary& prompts, const PromptInputs& in) {
  if (in.spec == nullptr) throw Error("render_problem: no problem spec");
  const problems::Spec& spec = *in.spec;
  const std::string dtype = in.dtype.empty() && !spec.dtypes.empty() ? spec.dtypes.front() : in.dtype;
  return prompts.render("problem", {{"problem_name", spec.name},
                                    {"statement", chomp(in.texts.statement)},
                                    {"world_size", std::to_string(in.world_size)},
                                    {"tensors", chomp(tensors_table(spec, dtype))},
                                    {"sizes", chomp(sizes_list(spec, in.world_size))},
                                    {"structure_check", structure_check_text(prompts, spec, in.world_size)},
                                    {"tolerance", chomp(tolerance_text(prompts, spec))},
                                    {"reference_source", chomp(in.texts.reference_source)},
                                    {"shell_mode", in.mode == Mode::kShell ? "1" : ""}});
}

InitialPrompt build_initial_prompt(const PromptLibrary& prompts, const PromptInputs& in) {
  TemplateVars v{{"topology", chomp(topology_text(prompts, in.topology))},
                 {"abi", chomp(in.texts.abi)},
                 {"primitives_guide", chomp(in.texts.primitives_guide)},
                 {"tradeoffs", chomp(prompts.render("tradeoffs", {}))},
                 {"tuning_markers", chomp(prompts.render("tuning_markers", {}))},
                 {"build", build_section(prompts, in.topology.arch)},
                 {"judging", judging_section(prompts)},
                 {"max_turns", std::to_string(in.max_turns)},
                 {"step_limit", std::to_string(in.max_turns)},
                 {"command_timeout", plain_number(in.command_timeout_s)},
                 {"eval_command", in.eval_command},
                 {"tune_command", in.tune_command},
                 {"problem_dir", in.problem_dir},
                 {"primitives_dir", in.primitives_dir},
                 {"submit_sentinel", kSubmitSentinel}};
  InitialPrompt p;
  p.system = prompts.render(in.mode == Mode::kRefine ? "system_refine" : "system_shell", v);
  p.user = render_problem(prompts, in);
  return p;
}

}  // namespace mgk::agent
