#include "tune/eval_objective.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "common/format.h"
#include "problems/catalog.h"

namespace mgk::tune {

TrialStatus status_for(results::Verdict verdict) {
  switch (verdict) {
    case results::Verdict::kCorrect: return TrialStatus::kOk;
    case results::Verdict::kIncorrect: return TrialStatus::kIncorrect;
    case results::Verdict::kCompileError: return TrialStatus::kCompile;
    case results::Verdict::kRuntimeError: return TrialStatus::kLaunch;
    case results::Verdict::kTimeout: return TrialStatus::kHang;
    case results::Verdict::kInfrastructure: return TrialStatus::kError;
    case results::Verdict::kCompiled: return TrialStatus::kError;  // the tuner never asks for it
  }
  return TrialStatus::kError;
}

std::string first_error_line(const std::string& compile_log) {
  constexpr size_t kMaxChars = 240;
  std::string first_nonempty, hit;
  for (size_t b = 0; b < compile_log.size() && hit.empty();) {
    size_t e = compile_log.find('\n', b);
    std::string line = compile_log.substr(b, e == std::string::npos ? e : e - b);
    b = e == std::string::npos ? compile_log.size() : e + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (first_nonempty.empty()) first_nonempty = line;
    if (line.find("error") != std::string::npos) hit = line;
  }
  std::string line = hit.empty() ? first_nonempty : hit;
  if (line.size() > kMaxChars) line = line.substr(0, kMaxChars - 3) + "...";
  return line;
}

std::vector<std::string> tuning_sizes(const std::string& size) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= size.size()) {
    size_t comma = std::min(size.find(',', from), size.size());
    std::string one = size.substr(from, comma - from);
    if (!one.empty() && std::find(out.begin(), out.end(), one) == out.end()) out.push_back(one);
    from = comma + 1;
  }
  return out;
}

Measurement measurement_from(const results::EvalResult& result, const std::string& size) {
  Measurement m;
  m.status = status_for(result.verdict);
  m.compile_seconds = result.compile_seconds;
  m.eval_seconds = result.wall_seconds;
  m.message = result.message;
  switch (result.verdict) {
    case results::Verdict::kCorrect: {
      const std::vector<std::string> sizes = tuning_sizes(size);
      double log_sum = 0;
      m.message.clear();
      for (const auto& one : sizes) {
        auto it = std::find_if(result.sizes.begin(), result.sizes.end(),
                               [&](const results::SizeResult& s) { return s.size == one; });
        if (it == result.sizes.end() || !it->candidate || it->candidate->median_us <= 0) {
          m.status = TrialStatus::kError;
          m.message = "the evaluation returned no candidate timing for size '" + one + "'";
          break;
        }
        log_sum += std::log(it->candidate->median_us);
      }
      if (m.status == TrialStatus::kOk) m.time_us = std::exp(log_sum / double(sizes.size()));
      break;
    }
    case results::Verdict::kCompileError:
      if (std::string line = first_error_line(result.compile_log); !line.empty())
        m.message = line;
      break;
    case results::Verdict::kIncorrect:
      for (const auto& s : result.sizes)
        if (!s.correct && !s.failure.empty()) {
          m.message = s.size + ": " + s.failure;
          break;
        }
      break;
    case results::Verdict::kRuntimeError:
    case results::Verdict::kTimeout:
      if (!result.phase.empty()) m.message += " (in " + result.phase + ")";
      break;
    case results::Verdict::kInfrastructure:
      break;
    case results::Verdict::kCompiled:
      m.message = "the evaluation compiled the kernel but did not run it";
      break;
  }
  if (m.message.empty() && m.status != TrialStatus::kOk)
    m.message = std::string("verdict ") + results::to_string(result.verdict);
  return m;
}

EvalObjective::EvalObjective(const SearchSpace& space, eval::EvalOptions base, std::string size)
    : space_(space), base_(std::move(base)), size_(std::move(size)) {
  const problems::Spec& spec = base_.plan.spec;
  const std::vector<std::string> timed = tuning_sizes(size_);
  if (timed.empty()) throw UsageError("--size names no size preset");
  for (const auto& one : timed)
    if (!spec.sizes.count(one)) {
      throw UsageError("problem " + spec.name + " has no size preset '" + one +
                       "'; its presets are " + join(spec.size_names));
    }
  // Correct at two presets, as the evaluator's own default demands, without paying for every
  // default preset on every trial: the timed ones, and with one timed the problem's first
  // other default (usually the small one). Resolved once, for every trial.
  std::vector<std::string> checked;
  if (timed.size() == 1)
    for (const auto& d : spec.default_sizes)
      if (d != timed.front()) {
        checked.push_back(d);
        break;
      }
  checked.insert(checked.end(), timed.begin(), timed.end());
  base_.plan = eval::plan_evaluation(spec, checked, base_.plan.dtype, base_.plan.world_size);
  base_.compile_only = false;
  base_.time = true;
}

eval::EvalOptions EvalObjective::options_for(const Config& config) const {
  eval::EvalOptions o = base_;
  o.defines = space_.defines(config);
  return o;
}

void EvalObjective::prepare(const Config& config) {
  eval::CompileResult compiled = eval::compile_candidate(options_for(config));
  std::lock_guard<std::mutex> lock(mu_);
  compiled_[space_.canonical(config)] = std::move(compiled);
}

Measurement EvalObjective::measure(const Config& config) {
  double compiled_ahead_seconds = 0;
  {
    // A configuration nvcc already rejected ahead of time is not compiled a second time.
    std::lock_guard<std::mutex> lock(mu_);
    auto it = compiled_.find(space_.canonical(config));
    if (it != compiled_.end()) {
      const eval::CompileResult c = std::move(it->second);
      compiled_.erase(it);
      if (!c.ok) {
        Measurement m;
        m.status = TrialStatus::kCompile;
        m.compile_seconds = c.seconds;
        m.message = !c.refusal.empty()     ? "refused: " + c.refusal
                    : !c.unreadable.empty() ? c.unreadable
                                            : first_error_line(c.log);
        if (m.message.empty()) m.message = "nvcc failed with no output";
        return m;
      }
      compiled_ahead_seconds = c.seconds;
    }
  }
  try {
    Measurement m = measurement_from(eval::evaluate(options_for(config)), size_);
    // The evaluation found the library in the compile cache; the compile time is prepare's.
    m.compile_seconds = std::max(m.compile_seconds, compiled_ahead_seconds);
    return m;
  } catch (const UsageError&) {
    throw;  // bad options: no configuration would fare better
  } catch (const Error& e) {
    Measurement m;
    m.status = TrialStatus::kError;
    m.message = e.what();
    return m;
  }
}

}  // namespace mgk::tune
