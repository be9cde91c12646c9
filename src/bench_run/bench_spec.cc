#include "bench_run/bench_spec.h"

#include <algorithm>
#include <map>

#include "common/error.h"
#include "common/name_patterns.h"
#include "problems/catalog.h"

namespace mgk::bench_run {

nlohmann::json BenchSpec::identity() const {
  nlohmann::json j{{"model", model},
                   {"problems", problems},
                   {"samples", samples},
                   {"mode", mode},
                   {"turns", turns},
                   {"world", world},
                   {"compile_only", compile_only},
                   {"prompt_version", prompt_version},
                   {"executor", executor},
                   {"rejudge_of", rejudge_of}};
  j["temperature"] = temperature ? nlohmann::json(*temperature) : nlohmann::json(nullptr);
  j["reasoning_effort"] = reasoning_effort ? nlohmann::json(*reasoning_effort) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json BenchSpec::to_json() const {
  nlohmann::json j = identity();
  j["problem_list"] = problem_list;
  j["attempt_max_cost_usd"] = attempt_max_cost_usd;
  j["max_tokens"] = max_tokens;
  j["command_timeout_s"] = command_timeout_s;
  j["jobs"] = jobs;
  j["gpus"] = gpus;
  j["max_cost_usd"] = max_cost_usd;
  j["name"] = name;
  return j;
}

BenchSpec BenchSpec::from_json(const nlohmann::json& j, int64_t run_id) {
  BenchSpec s;
  try {
    s.model = j.at("model").get<std::string>();
    s.problems = j.at("problems").get<std::string>();
    s.problem_list = j.at("problem_list").get<std::vector<std::string>>();
    s.samples = j.at("samples").get<int>();
    s.mode = j.at("mode").get<std::string>();
    s.turns = j.at("turns").get<int>();
    s.world = j.at("world").get<int>();
    s.compile_only = j.at("compile_only").get<bool>();
    s.attempt_max_cost_usd = j.at("attempt_max_cost_usd").get<double>();
    s.max_tokens = j.at("max_tokens").get<int>();
    s.command_timeout_s = j.at("command_timeout_s").get<double>();
    s.prompt_version = j.at("prompt_version").get<std::string>();
    s.executor = j.value("executor", "local");  // runs from before Slurm were local
    s.rejudge_of = j.value("rejudge_of", int64_t(0));  // runs from before rejudging judged their own
    if (!j.at("temperature").is_null()) s.temperature = j["temperature"].get<double>();
    if (!j.at("reasoning_effort").is_null()) s.reasoning_effort = j["reasoning_effort"].get<std::string>();
    s.jobs = j.at("jobs").get<int>();
    s.gpus = j.at("gpus").get<std::vector<int>>();
    s.max_cost_usd = j.at("max_cost_usd").get<double>();
    s.name = j.value("name", "");  // runs from before names had none
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("run " + std::to_string(run_id) + " was not started by this version of 'mgk bench' (" +
                     e.what() + "); start a new run");
  }
  return s;
}

std::vector<std::string> expand_problems(const std::string& text) {
  std::vector<std::string> names;
  for (const std::string& pattern : NamePatterns::parse({text}).patterns) {
    const std::vector<std::string> hits = problems::match(pattern);
    if (hits.empty()) {
      // The categories, not 50-odd names: globs are written per category ("tp/*").
      std::map<std::string, int> per_category;
      const auto all = problems::list_names();
      for (const auto& n : all) ++per_category[n.substr(0, n.find('/'))];
      std::string categories;
      for (const auto& [c, k] : per_category)
        categories += (categories.empty() ? "" : ", ") + c + "/ (" + std::to_string(k) + ")";
      throw UsageError("--problems '" + pattern + "' matches no problem; the suite's " + std::to_string(all.size()) +
                       " are in " + categories + " ('mgk problems' lists them)");
    }
    names.insert(names.end(), hits.begin(), hits.end());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

int world_for(const problems::Spec& spec, int requested) {
  return std::clamp(requested, spec.min_world, std::max(spec.min_world, spec.max_world));
}

}  // namespace mgk::bench_run
