#include "report/provenance.h"

#include <algorithm>
#include <map>
#include <set>

namespace mgk::report {
namespace {

// The distinct values seen, as one value, a list, or null.
class Seen {
 public:
  void add(const nlohmann::json& v) {
    if (v.is_null() || (v.is_string() && v.get<std::string>().empty())) return;
    if (std::find(values_.begin(), values_.end(), v) == values_.end()) values_.push_back(v);
  }
  nlohmann::json value() const {
    if (values_.empty()) return nullptr;
    if (values_.size() == 1) return values_.front();
    return values_;
  }

 private:
  std::vector<nlohmann::json> values_;
};

const char* const kEvaluationFields[] = {"mgk",  "nvcc", "cuda_driver", "cuda_runtime", "nccl",
                                         "gpu",  "gpus", "arch",        "calibrated"};
const char* const kSamplingFields[] = {"turns", "max_tokens", "temperature", "reasoning_effort", "compile_only"};

std::string text_of(const nlohmann::json& v) {
  if (v.is_null()) return "unknown";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + text_of(x);
    return s + " (the rows differ)";
  }
  return v.dump();
}

}  // namespace

nlohmann::json run_provenance(const RunData& data) {
  std::map<std::string, Seen> seen;
  std::set<std::string> problems;
  for (const auto& a : data.attempts) {
    problems.insert(a.summary.problem);
    seen["model"].add(a.summary.model);
    seen["mode"].add(a.summary.mode);
    seen["prompt_version"].add(a.summary.prompt_version);
    seen["world"].add(a.summary.world_size);
    for (const char* f : kSamplingFields)
      if (a.summary.config.is_object() && a.summary.config.contains(f)) seen[f].add(a.summary.config[f]);
    for (const auto& e : a.evaluations) {
      const nlohmann::json& p = e.result.provenance;
      for (const char* f : kEvaluationFields) seen[f].add(p.is_object() ? p.value(f, nlohmann::json()) : nlohmann::json());
      seen["isolation"].add(e.result.isolation);
    }
  }
  if (seen["model"].value().is_null()) seen["model"].add(data.run.model);
  nlohmann::json out = {{"run", data.run.id}, {"host", data.run.host}, {"problems", problems.size()}};
  if (data.run.args.is_object() && data.run.args.value("rejudge_of", int64_t(0)) > 0)
    out["rejudge_of"] = data.run.args["rejudge_of"];
  for (const auto& [name, s] : seen) out[name] = s.value();
  return out;
}

std::vector<std::string> provenance_lines(const nlohmann::json& p) {
  auto field = [&](const char* name) { return text_of(p.value(name, nlohmann::json())); };
  // Not set is the provider's own default, not an unknown.
  auto sampling = [&](const char* name) { return p.value(name, nlohmann::json()).is_null() ? "default" : field(name); };
  std::vector<std::string> lines = {
      "model " + field("model") + ", " + field("mode") + " mode, " + field("turns") + " turn(s), max tokens " +
          field("max_tokens") + ", temperature " + sampling("temperature") + ", reasoning effort " +
          sampling("reasoning_effort") + ", prompts " + field("prompt_version"),
      std::to_string(p.value("problems", 0)) + " problem(s) at world " + field("world") + (p.value("compile_only", false) ? ", --compile-only" : ""),
      "mgk " + field("mgk") + ", nvcc " + field("nvcc") + " for " + field("arch") + ", CUDA driver " +
          field("cuda_driver") + ", runtime " + field("cuda_runtime") + ", NCCL " + field("nccl"),
      field("gpus") + " x " + field("gpu") + " per evaluation, isolation " + field("isolation") + ", calibrated " +
          field("calibrated") + ", host " + field("host"),
  };
  if (p.contains("rejudge_of"))
    lines.push_back("kernels of run " + p["rejudge_of"].dump() +
                    " judged again, no model called (its turns, tokens and cost are that run's)");
  return lines;
}

}  // namespace mgk::report
