// A benchmark problem as its folder describes it (problems/<category>/<name>/problem.json):
// dims per size preset, tensors with dtype, per-rank shape expressions, input distributions,
// symmetric placement, tolerance, and the cost model. One source of truth for the harness,
// the prompts and the roofline.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mgk/dtype_table.h"

namespace mgk::problems {

// The ABI's element type; names and sizes come from the one table (mgk/dtype_table.h).
using DType = mgk_dtype;
DType dtype_from_string(const std::string& s);  // UsageError listing valid names
const char* to_string(DType t);
int dtype_bytes(DType t);
bool is_float(DType t);
// Unit roundoff (half the machine epsilon): 2^-8 for bf16, 2^-11 f16, 2^-24 f32, 2^-53 f64.
double unit_roundoff(DType t);

struct InputInit {
  std::string dist = "normal";  // normal | uniform | randint | zipf
  double a = 0, b = 1;          // normal: mean, std; uniform/randint/zipf: [a, b)
  double exponent = 0;          // zipf: P(a + j) ~ (j + 1) ** -exponent
  // A parameter given as a string is an expression of the preset's dims and W (not R: every
  // rank's oracle regenerates every rank's values with one generator), e.g. "std": "H ** -0.5";
  // evaluated per preset (eval/plan), in place of `a` or `b`. Empty: the number above.
  std::string a_expr, b_expr;
  // "rows": {"length": expr, "zero_every": k, "tiny_every": k, "tiny": t, "massive_every": k,
  // "massive": m}: special rows of `row_length` elements (default: the shape's last dim), the
  // same on every rank, moved by a phase drawn each trial: every zero_every-th row exactly
  // zero, every tiny_every-th (half a period on) its values times `tiny` < 1, every
  // massive_every-th (a period on, less one) times `massive` > 1 (mgk_input_gen in
  // src/abi/mgk/abi.h). 0 for none; not for randint or zipf (indices and counts would leave
  // their range).
  std::string row_length;
  long long zero_every = 0, tiny_every = 0, massive_every = 0;
  double tiny = 0, massive = 0;
};

enum class ToleranceKind {
  kExact,     // bit-for-bit (data movement)
  kRounding,  // |got - exp| <= factor * u(dtype) * scale + min_normal: scale from the oracle
  kAllclose,  // |got - exp| <= atol + rtol * |exp|
};

struct Tolerance {
  ToleranceKind kind = ToleranceKind::kExact;
  std::string factor = "1";  // kRounding: expression of W and dims (e.g. "W + 1")
  double atol = 0, rtol = 0; // kAllclose
};

struct TensorSpec {
  std::string name;
  std::string dtype;               // a dtype name, or "T" for the problem's chosen dtype
  std::vector<std::string> shape;  // expressions of dims, W (world size) and R (rank)
  bool symmetric = false;          // allocated in symmetric memory, peers visible
  InputInit init;                  // inputs only
  Tolerance tolerance;             // outputs only
  // Outputs only: the input this output updates in place ("in_place_of": "grads"). The
  // output is that input's buffer (same dtype, shape and placement, which it inherits: a
  // spec that states them differently is refused); the solution gets both descriptors with
  // the same data pointer, reads the input's values from it and leaves the updated values
  // there. The harness refills it before every call (each call sees freshly drawn values,
  // never its own previous output), checks it against the oracle like any output, and skips
  // the unchanged-input check for that input only.
  std::string in_place_of;
  std::string description;
};

struct CostModel {  // per rank, expressions of dims and W
  std::string flops = "0";
  std::string hbm_bytes = "0";
  std::string link_bytes = "0";  // bytes this rank sends over the GPU interconnect
};

// A condition the dims must meet at every preset and world the problem runs at ("K <= E":
// top-K routing picks K distinct experts). World ranges cannot say it when a dim follows W;
// without it, a world outside the problem resolves and fails later as an output mismatch.
struct Requirement {
  std::string expr;  // non-zero when met
  std::string why;   // for the error: what breaks otherwise (never empty)
};

// Worlds the problem is also checked at, because at its smallest worlds some of its structure
// does not exist: at W = 2 a DP x CP grid has a one-member group, top-2 of E = 2 experts keeps
// every expert, so a wrong group layout or a renormalisation cannot show there. An evaluation
// at a world below one of these is checked there too (correctness only, ranks sharing the
// evaluation's GPUs); it is still timed at its own world.
struct StructureCheck {
  std::vector<int> worlds;  // ascending, inside the problem's world range
  std::string why;          // what is missing below them (for the user and the model)
};

struct Spec {
  std::string name;        // "collectives/all_reduce"
  std::string category;    // "collectives"
  std::string title;
  std::optional<int> pkb_id;
  std::filesystem::path dir;
  int min_world = 2;
  int max_world = 72;
  std::vector<std::string> dtypes;  // values "T" may take; the first is the default
  std::vector<std::string> size_names;  // presets in file order
  std::map<std::string, std::map<std::string, std::string>> sizes;  // preset -> dim -> expr
  std::vector<std::string> default_sizes;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<Requirement> requirements;  // "requires"; checked by size_dims
  StructureCheck structure_check;         // "structure_check"; empty: none
  CostModel cost;
  std::vector<std::string> tags;

  std::filesystem::path reference_path() const { return dir / "reference.cu"; }
  std::filesystem::path statement_path() const { return dir / "statement.md"; }
  std::filesystem::path expert_path() const { return dir / "expert.cu"; }
};

// Parses and validates; errors (UsageError) name the file and the field.
Spec parse_spec(const nlohmann::json& j, const std::string& name, const std::filesystem::path& dir);
Spec load_spec_file(const std::filesystem::path& problem_json, const std::string& name);

}  // namespace mgk::problems
