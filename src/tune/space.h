// The search space of a kernel: the tunable parameters its `// mgk:tune` markers declare and
// the constraints that prune their cartesian product (markers.h parses them from source).
// A configuration picks one value per parameter, as an index into that parameter's values.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expr.h"

namespace mgk::tune {

// One value of a parameter: the text passed to the compiler, and its number when it is one.
struct Value {
  std::string text;              // "64", "0.5", "kTma"
  std::optional<double> number;  // absent for identifiers
  bool is_integer = false;       // written without '.' or exponent

  nlohmann::json to_json() const;  // a JSON integer, float or string
};

struct Parameter {
  std::string name;           // a C identifier, applied as -DNAME=VALUE
  std::vector<Value> values;  // in marker order; never empty, no duplicates
  int line = 0;               // 1-based line of the marker

  bool numeric() const;  // every value is a number (usable in constraints)
};

struct Constraint {
  std::string text;  // an expr.h boolean expression over numeric parameter names
  int line = 0;
};

// One index into Parameter::values per parameter, in declaration order.
using Config = std::vector<std::uint32_t>;

class SearchSpace {
 public:
  SearchSpace() = default;
  // Throws UsageError if the product of the value counts does not fit in 63 bits.
  SearchSpace(std::vector<Parameter> parameters, std::vector<Constraint> constraints);

  const std::vector<Parameter>& parameters() const { return parameters_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  bool empty() const { return parameters_.empty(); }

  // Size of the cartesian product, before constraints.
  std::uint64_t size() const { return size_; }

  // Mixed-radix numbering of the product: the first parameter varies slowest.
  Config decode(std::uint64_t index) const;
  std::uint64_t encode(const Config& config) const;

  // True when every constraint holds. Throws UsageError naming the constraint's line when one
  // cannot be evaluated for this configuration (division by zero, ...).
  bool satisfies(const Config& config) const;

  // Number of configurations satisfying the constraints; walks the whole product, so only
  // for spaces up to `limit` (returns nullopt above it).
  std::optional<std::uint64_t> count_valid(std::uint64_t limit = 1u << 20) const;

  // The numeric parameters of a configuration, as constraint variables.
  expr::Vars variables(const Config& config) const;

  // "NAME=VALUE" for each parameter (the evaluator adds -D).
  std::vector<std::string> defines(const Config& config) const;

  // {"NAME": value, ...}: keys sorted, so dump() is canonical (the cache key).
  nlohmann::json to_json(const Config& config) const;
  std::string canonical(const Config& config) const { return to_json(config).dump(); }

  // The configuration whose to_json() equals `params`; nullopt when it names other
  // parameters or a value not in the space.
  std::optional<Config> from_json(const nlohmann::json& params) const;

  // "BLOCKS=8 CHUNK_KB=64", for tables and logs.
  std::string describe(const Config& config) const;

 private:
  std::vector<Parameter> parameters_;
  std::vector<Constraint> constraints_;
  std::uint64_t size_ = 1;
};

}  // namespace mgk::tune
