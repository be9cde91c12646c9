#include "report/fail_under.h"

#include <cmath>
#include <regex>
#include <sstream>

#include "common/error.h"
#include "report/table.h"

namespace mgk::report {
namespace {

const std::vector<AtK>* values_of(const RunMetrics& m, const Threshold& t) {
  switch (t.metric) {
    case Threshold::Metric::kPass: return &m.suite.pass;
    case Threshold::Metric::kCompiles: return &m.suite.compiled;
    case Threshold::Metric::kFast:
      for (const FastP& f : m.suite.fast)
        if (std::fabs(f.p - t.p) < 1e-12) return &f.at_k;
      return nullptr;
  }
  return nullptr;
}

}  // namespace

Threshold parse_threshold(const std::string& text) {
  static const std::regex form(R"(^(pass|compiles|fast_([0-9]+(\.[0-9]+)?))@([1-9][0-9]*)=([0-9]+(\.[0-9]+)?)(%?)$)");
  std::smatch m;
  if (!std::regex_match(text, m, form))
    throw UsageError("--fail-under '" + text + "': expected METRIC=VALUE, METRIC one of pass@K, compiles@K, "
                     "fast_P@K (e.g. pass@1=0.5, fast_1.5@1=25%)");
  Threshold t;
  t.text = text;
  const std::string name = m[1];
  t.metric = name == "pass" ? Threshold::Metric::kPass
             : name == "compiles" ? Threshold::Metric::kCompiles
                                  : Threshold::Metric::kFast;
  if (t.metric == Threshold::Metric::kFast) t.p = std::stod(m[2]);
  t.k = std::stoi(m[4]);
  t.at_least = std::stod(m[5]) / (m[7].length() ? 100.0 : 1.0);
  if (t.at_least > 1)
    throw UsageError("--fail-under '" + text + "': the value is a fraction of problems, at most 1 (or 100%)");
  return t;
}

std::vector<std::string> unmet(const RunMetrics& m, const std::vector<Threshold>& thresholds) {
  std::vector<std::string> lines;
  for (const Threshold& t : thresholds) {
    const std::string name = t.text.substr(0, t.text.find('='));
    const std::vector<AtK>* values = values_of(m, t);
    if (!values) {
      std::ostringstream p;
      p << t.p;
      lines.push_back(name + " is not in the report (add --p " + p.str() + ")");
      continue;
    }
    if (t.k > int(values->size()) || (*values)[size_t(t.k - 1)].problems == 0) {
      lines.push_back(name + " is unknown: no problem has " + std::to_string(t.k) + " finished sample(s)");
      continue;
    }
    const AtK& a = (*values)[size_t(t.k - 1)];
    if (!a.value) {
      lines.push_back(name + " is unknown: " + std::to_string(a.unknown) + " problem(s) " +
                      (t.metric == Threshold::Metric::kFast ? "not timed" : "not run"));
      continue;
    }
    if (*a.value < t.at_least) lines.push_back(name + " is " + percent(a.value) + ", under " + percent(t.at_least));
  }
  return lines;
}

}  // namespace mgk::report
