// The scripted model of the bench tests: it answers each chat request from what the request
// is (the problem its first user message names, and the turn: how many replies the
// conversation already holds), never from the order requests arrive in, so concurrent
// attempts, and a run killed and resumed, get the replies an uninterrupted run gets.
//
// Per problem, over two turns, from the plain candidates (tests/gpu/candidates/) and the
// bad ones (tests/bad_candidates/), their shared header pasted in (a reply is one file):
//   all_gather      correct, correct           all_reduce      wrong values, correct
//   broadcast       syntax error, correct      gather          prose (no code), correct
//   reduce          a hang, twice              reduce_scatter  a crash, twice
//   scatter         NCCL (refused), twice      all_to_all      syntax error, twice
// Every other problem (the compute ones): its plain candidate (gpu/candidates/CATEGORY/).
// With --compile-only every kernel that compiles is only "compiled"; on a GPU the verdicts
// are the ones named.
#pragma once
#include <regex>
#include <string>

#include "common/file.h"
#include "support/scripted_server.h"
#include "support/test_paths.h"

namespace mgk::bench_run::testing {

// The source at `path` (below tests/) as one file: the candidates' shared headers
// (plain_mlp.cuh, moe_plain.cuh, fp8_plain.cuh, plain_compute.cuh, simple_common.cuh) pasted
// in where they are included.
inline std::string one_file(const std::string& path) {
  const auto dir = test::tests_dir();
  auto body_of = [&](const std::string& header) {
    std::string text = read_file(dir / "gpu/candidates" / header);
    return text.erase(0, text.find("#pragma once") + std::string("#pragma once").size());
  };
  std::string src = read_file(dir / path);
  auto paste = [&](const std::string& header) {
    for (const std::string dir_part : {"", "../", "../gpu/candidates/"}) {
      const std::string inc = "#include \"" + dir_part + header + "\"";
      if (auto at = src.find(inc); at != std::string::npos) {
        src.replace(at, inc.size(), body_of(header));
        return;
      }
    }
  };
  paste("plain_mlp.cuh");      // first: these three include plain_compute.cuh
  paste("moe_plain.cuh");
  paste("fp8_plain.cuh");
  paste("plain_compute.cuh");  // then: it includes simple_common.cuh
  paste("simple_common.cuh");
  return src;
}

inline std::string kernel_reply(const std::string& path) { return "Here it is.\n```cuda\n" + one_file(path) + "```\n"; }

inline std::string suite_reply(const std::string& problem, int turn) {
  const std::string category = problem.substr(0, problem.find('/')), name = problem.substr(problem.find('/') + 1);
  // The collectives' plain candidates lie in gpu/candidates/, the others' in a folder by category.
  const std::string candidate = "gpu/candidates/" + (category == "collectives" ? "" : category + "/") + name + ".cu";
  const std::string syntax_error = "```cuda\n#include \"mgk/solution.h\"\nMGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return 0 }\n```\n";
  const bool first = turn == 0;
  if (name == "all_reduce") return first ? kernel_reply("bad_candidates/wrong_values.cu") : kernel_reply(candidate);
  if (name == "broadcast") return first ? syntax_error : kernel_reply(candidate);
  if (name == "gather") return first ? "I would first like to discuss the design." : kernel_reply(candidate);
  if (name == "reduce") return kernel_reply("bad_candidates/hang.cu");
  if (name == "reduce_scatter") return kernel_reply("bad_candidates/crash.cu");
  if (name == "scatter") return kernel_reply("bad_candidates/uses_nccl.cu");
  if (name == "all_to_all") return syntax_error;
  return kernel_reply(candidate);
}

// The problem and turn of an OpenAI chat request, as the agent sends it.
inline std::pair<std::string, int> problem_and_turn(const test::RecordedRequest& r) {
  const auto& messages = r.json.at("messages");
  std::string problem;
  int assistant = 0;
  for (const auto& m : messages) {
    if (m["role"] == "assistant") ++assistant;
    std::smatch hit;
    const std::string text = m["content"];
    if (problem.empty() && m["role"] == "user" && std::regex_search(text, hit, std::regex("# Problem: (\\S+)")))
      problem = hit[1];
  }
  return {problem, assistant};
}

// Answers with suite_reply; the usage grows with the turn, so totals are known.
inline test::ScriptedResponse suite_response(const test::RecordedRequest& r, std::chrono::milliseconds delay = {}) {
  auto [problem, turn] = problem_and_turn(r);
  return test::ScriptedResponse::json(
             200, test::openai_chat_reply(suite_reply(problem, turn), {1000 + 500 * turn, 300}, "stop", "gpt-test"))
      .after(delay);
}

}  // namespace mgk::bench_run::testing
