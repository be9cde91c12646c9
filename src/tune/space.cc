#include "tune/space.h"

#include <limits>

#include "common/error.h"

namespace mgk::tune {

nlohmann::json Value::to_json() const {
  if (!number) return text;
  if (is_integer) return static_cast<long long>(*number);
  return *number;
}

bool Parameter::numeric() const {
  for (const auto& v : values)
    if (!v.number) return false;
  return true;
}

SearchSpace::SearchSpace(std::vector<Parameter> parameters, std::vector<Constraint> constraints)
    : parameters_(std::move(parameters)), constraints_(std::move(constraints)) {
  constexpr std::uint64_t kMax = std::uint64_t{1} << 63;
  size_ = 1;
  for (const auto& p : parameters_) {
    if (p.values.empty())
      throw UsageError("mgk:tune " + p.name + " (line " + std::to_string(p.line) +
                       ") has no values");
    if (size_ > kMax / p.values.size())
      throw UsageError("the mgk:tune parameters span more than 2^63 configurations; "
                       "narrow the ranges");
    size_ *= p.values.size();
  }
}

Config SearchSpace::decode(std::uint64_t index) const {
  Config config(parameters_.size());
  for (size_t i = parameters_.size(); i-- > 0;) {
    const std::uint64_t radix = parameters_[i].values.size();
    config[i] = static_cast<std::uint32_t>(index % radix);
    index /= radix;
  }
  return config;
}

std::uint64_t SearchSpace::encode(const Config& config) const {
  std::uint64_t index = 0;
  for (size_t i = 0; i < parameters_.size(); ++i)
    index = index * parameters_[i].values.size() + config.at(i);
  return index;
}

expr::Vars SearchSpace::variables(const Config& config) const {
  expr::Vars vars;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const Value& v = parameters_[i].values.at(config.at(i));
    if (v.number) vars[parameters_[i].name] = *v.number;
  }
  return vars;
}

bool SearchSpace::satisfies(const Config& config) const {
  if (constraints_.empty()) return true;
  const expr::Vars vars = variables(config);
  for (const auto& c : constraints_) {
    double holds;
    try {
      holds = expr::evaluate(c.text, vars);
    } catch (Error& e) {
      e.with_context("in the mgk:tune-constraint on line " + std::to_string(c.line) +
                     ", for " + describe(config));
      throw;
    }
    if (holds == 0) return false;
  }
  return true;
}

std::optional<std::uint64_t> SearchSpace::count_valid(std::uint64_t limit) const {
  if (size_ > limit) return std::nullopt;
  std::uint64_t n = 0;
  for (std::uint64_t i = 0; i < size_; ++i) n += satisfies(decode(i)) ? 1 : 0;
  return n;
}

std::vector<std::string> SearchSpace::defines(const Config& config) const {
  std::vector<std::string> out;
  out.reserve(parameters_.size());
  for (size_t i = 0; i < parameters_.size(); ++i)
    out.push_back(parameters_[i].name + "=" + parameters_[i].values.at(config.at(i)).text);
  return out;
}

nlohmann::json SearchSpace::to_json(const Config& config) const {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < parameters_.size(); ++i)
    j[parameters_[i].name] = parameters_[i].values.at(config.at(i)).to_json();
  return j;
}

std::optional<Config> SearchSpace::from_json(const nlohmann::json& params) const {
  if (!params.is_object() || params.size() != parameters_.size()) return std::nullopt;
  Config config(parameters_.size());
  for (size_t i = 0; i < parameters_.size(); ++i) {
    auto it = params.find(parameters_[i].name);
    if (it == params.end()) return std::nullopt;
    bool found = false;
    for (size_t k = 0; k < parameters_[i].values.size() && !found; ++k) {
      if (parameters_[i].values[k].to_json() == *it) {
        config[i] = static_cast<std::uint32_t>(k);
        found = true;
      }
    }
    if (!found) return std::nullopt;
  }
  return config;
}

std::string SearchSpace::describe(const Config& config) const {
  std::string out;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (i) out += ' ';
    out += parameters_[i].name + "=" + parameters_[i].values.at(config.at(i)).text;
  }
  return out;
}

}  // namespace mgk::tune
