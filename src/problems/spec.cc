#include "problems/spec.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "common/error.h"
#include "common/expr.h"

namespace mgk::problems {

DType dtype_from_string(const std::string& s) {
  if (const DTypeInfo* d = dtype_info(std::string_view(s))) return d->id;
  std::string valid;
  for (const auto& d : kDTypes) valid += std::string(valid.empty() ? "" : ", ") + d.name;
  throw UsageError("unknown dtype '" + s + "' (valid: " + valid + ")");
}
const char* to_string(DType t) { return dtype_name(t); }
int dtype_bytes(DType t) { return int(dtype_size(t)); }
bool is_float(DType t) { return dtype_is_float(t); }
double unit_roundoff(DType t) {
  const DTypeInfo* d = dtype_info(t);
  return d ? d->unit_roundoff : 0;
}

namespace {

class Reader {
 public:
  explicit Reader(std::string where) : where_(std::move(where)) {}
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw UsageError(where_ + ": field '" + field + "': " + what);
  }
  const std::string& where() const { return where_; }

 private:
  std::string where_;
};

std::string expr_string(const Reader& r, const std::string& field, const nlohmann::json& v) {
  if (v.is_string()) {
    try {
      expr::names(v.get<std::string>());  // syntax check now, not at evaluation time
    } catch (const UsageError& e) {
      r.fail(field, e.what());
    }
    return v.get<std::string>();
  }
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return std::to_string(v.get<double>());
  r.fail(field, "expected an expression (string or number)");
}

// An init parameter: a number, or an expression of the dims and W (a string). R is refused:
// every rank's oracle regenerates every rank's inputs with the one generator it is given.
void init_param(const Reader& r, const nlohmann::json& init, const std::string& field, const char* key,
                double fallback, double& value, std::string& expr) {
  value = fallback;
  expr.clear();
  if (!init.contains(key)) return;
  const auto& v = init[key];
  const std::string where = field + "." + key;
  if (v.is_number()) {
    value = v.get<double>();
    if (!std::isfinite(value)) r.fail(where, "must be finite");
    return;
  }
  if (!v.is_string()) r.fail(where, "expected a number or an expression of the dims and W (a string)");
  expr = expr_string(r, where, v);
  for (const auto& n : expr::names(expr))
    if (n == "R") r.fail(where, "'R' is not allowed: the inputs' distribution is the same on every rank");
}

void parse_init(const Reader& r, const nlohmann::json& init, const std::string& field, TensorSpec& t) {
  if (!init.is_object()) r.fail(field, "expected an object");
  InputInit& in = t.init;
  in.dist = init.value("dist", "normal");
  if (in.dist == "normal") {
    init_param(r, init, field, "mean", 0.0, in.a, in.a_expr);
    init_param(r, init, field, "std", 1.0, in.b, in.b_expr);
    if (in.b_expr.empty() && in.b < 0) r.fail(field + ".std", "must not be negative");
  } else if (in.dist == "uniform" || in.dist == "randint" || in.dist == "zipf") {
    if (!init.contains("low") || !init.contains("high")) r.fail(field, "'" + in.dist + "' needs 'low' and 'high'");
    init_param(r, init, field, "low", 0.0, in.a, in.a_expr);
    init_param(r, init, field, "high", 1.0, in.b, in.b_expr);
    if (in.a_expr.empty() && in.b_expr.empty() && !(in.b > in.a)) r.fail(field, "'high' must exceed 'low'");
  } else {
    r.fail(field + ".dist", "'" + in.dist + "' (valid: normal, uniform, randint, zipf)");
  }
  if (in.dist == "zipf") {
    const auto e = init.find("exponent");
    if (e == init.end() || !e->is_number() || !(e->get<double>() > 0) || !std::isfinite(e->get<double>()))
      r.fail(field + ".exponent", "'zipf' needs a positive 'exponent' (P(low + j) falls as (j + 1) ** -exponent)");
    in.exponent = e->get<double>();
  }
  const std::string keys = in.dist == "normal" ? "mean, std" : in.dist == "zipf" ? "low, high, exponent" : "low, high";
  for (const auto& [k, v] : init.items())
    if (k != "dist" && k != "rows" && (", " + keys + ",").find(", " + k + ",") == std::string::npos)
      r.fail(field + "." + k, "unknown key for '" + in.dist + "' (valid: dist, " + keys + ", rows)");
  if (!init.contains("rows")) return;
  const auto& rows = init["rows"];
  const std::string rf = field + ".rows";
  if (!rows.is_object())
    r.fail(rf, "expected {\"zero_every\": k, \"tiny_every\": k, \"tiny\": t, \"massive_every\": k, "
               "\"massive\": m, \"length\": expr}");
  if (in.dist == "randint" || in.dist == "zipf")
    r.fail(rf, "not for '" + in.dist + "': zeros or scaled values would leave the integers' range");
  for (const auto& [k, v] : rows.items())
    if (k != "length" && k != "zero_every" && k != "tiny_every" && k != "tiny" && k != "massive_every" &&
        k != "massive")
      r.fail(rf + "." + k, "unknown key (valid: length, zero_every, tiny_every, tiny, massive_every, massive)");
  auto every = [&](const char* key) -> long long {
    if (!rows.contains(key)) return 0;
    const auto& v = rows[key];
    if (!v.is_number_integer() || v.get<long long>() < 2)
      r.fail(rf + "." + key, "expected an integer of at least 2 (the period, in rows)");
    return v.get<long long>();
  };
  in.zero_every = every("zero_every");
  in.tiny_every = every("tiny_every");
  in.massive_every = every("massive_every");
  if (in.zero_every == 0 && in.tiny_every == 0 && in.massive_every == 0)
    r.fail(rf, "needs 'zero_every', 'tiny_every' or 'massive_every'");
  // The factor of the rows a period scales: given with its period and only with it.
  auto factor = [&](const std::string& key, long long period, bool (*in_range)(double), const char* range) {
    if (rows.contains(key) != (period != 0))
      r.fail(rf + "." + key, "'" + key + "' (the factor of the " + key + " rows) goes with '" + key +
                                 "_every', and only with it");
    if (!period) return 0.0;
    if (!rows[key].is_number() || !in_range(rows[key].get<double>()))
      r.fail(rf + "." + key, std::string("expected a number ") + range);
    return rows[key].get<double>();
  };
  in.tiny = factor("tiny", in.tiny_every, [](double f) { return f > 0 && f < 1; }, "in (0, 1)");
  in.massive = factor("massive", in.massive_every, [](double f) { return f > 1; }, "above 1");
  if (rows.contains("length")) {
    in.row_length = expr_string(r, rf + ".length", rows["length"]);
    for (const auto& n : expr::names(in.row_length))
      if (n == "R") r.fail(rf + ".length", "'R' is not allowed: the special rows are the same on every rank");
  } else {
    if (t.shape.empty()) r.fail(rf + ".length", "a scalar has no rows; give 'length'");
    in.row_length = t.shape.back();
  }
}

TensorSpec parse_tensor(const Reader& r, const nlohmann::json& j, const std::string& field,
                        bool is_output, const std::vector<std::string>& dtypes) {
  TensorSpec t;
  if (!j.is_object()) r.fail(field, "expected an object");
  t.name = j.value("name", "");
  if (t.name.empty()) r.fail(field, "missing 'name'");
  std::string f = field + "." + t.name;
  t.dtype = j.value("dtype", "T");
  if (is_output) t.in_place_of = j.value("in_place_of", "");
  if (!is_output && j.contains("in_place_of")) r.fail(f + ".in_place_of", "only outputs can be in place of an input");
  if (!t.in_place_of.empty()) {
    // The input's buffer: its dtype, shape and placement are the input's (parse_spec
    // copies them), so stating them again could only contradict it.
    for (const char* key : {"dtype", "shape", "symmetric"})
      if (j.contains(key)) r.fail(f + "." + key, std::string("an in-place output has its input's ") + key + "; leave it out");
  } else if (t.dtype != "T") {
    try {
      dtype_from_string(t.dtype);
    } catch (const UsageError& e) {
      r.fail(f + ".dtype", e.what());
    }
  }
  else if (dtypes.empty()) r.fail(f + ".dtype", "'T' used but the problem lists no 'dtypes'");
  if (t.in_place_of.empty()) {
    if (!j.contains("shape") || !j["shape"].is_array()) r.fail(f + ".shape", "expected an array");
    for (size_t i = 0; i < j["shape"].size(); ++i)
      t.shape.push_back(expr_string(r, f + ".shape[" + std::to_string(i) + "]", j["shape"][i]));
  }
  if (t.shape.size() > 8) r.fail(f + ".shape", "at most 8 dimensions");
  t.symmetric = j.value("symmetric", false);
  t.description = j.value("description", "");
  if (!is_output) {
    if (j.contains("init")) parse_init(r, j["init"], f + ".init", t);
  } else {
    const auto& tol = j.value("tolerance", nlohmann::json::object());
    std::string kind = tol.value("kind", "exact");
    if (kind == "exact") {
      t.tolerance.kind = ToleranceKind::kExact;
    } else if (kind == "rounding") {
      t.tolerance.kind = ToleranceKind::kRounding;
      t.tolerance.factor = expr_string(r, f + ".tolerance.factor", tol.value("factor", nlohmann::json("1")));
    } else if (kind == "allclose") {
      t.tolerance.kind = ToleranceKind::kAllclose;
      t.tolerance.atol = tol.value("atol", 0.0);
      t.tolerance.rtol = tol.value("rtol", 0.0);
      if (t.tolerance.atol <= 0 && t.tolerance.rtol <= 0)
        r.fail(f + ".tolerance", "allclose needs a positive 'atol' or 'rtol'");
    } else {
      r.fail(f + ".tolerance.kind", "'" + kind + "' (valid: exact, rounding, allclose)");
    }
  }
  return t;
}

// An in-place output names an input that exists and no other output updates, and takes
// its dtype, shape and placement.
void resolve_in_place(const Reader& r, Spec& s) {
  std::vector<std::string> taken;
  for (auto& o : s.outputs) {
    if (o.in_place_of.empty()) continue;
    const std::string f = "outputs." + o.name + ".in_place_of";
    auto in = std::find_if(s.inputs.begin(), s.inputs.end(), [&](const TensorSpec& t) { return t.name == o.in_place_of; });
    if (in == s.inputs.end()) r.fail(f, "no input named '" + o.in_place_of + "'");
    if (std::find(taken.begin(), taken.end(), o.in_place_of) != taken.end())
      r.fail(f, "input '" + o.in_place_of + "' is already updated in place by another output");
    taken.push_back(o.in_place_of);
    o.dtype = in->dtype;
    o.shape = in->shape;
    o.symmetric = in->symmetric;
  }
}

}  // namespace

Spec parse_spec(const nlohmann::json& j, const std::string& name, const std::filesystem::path& dir) {
  Reader r(name + " (" + (dir / "problem.json").string() + ")");
  if (!j.is_object()) r.fail("<root>", "expected a JSON object");
  Spec s;
  s.name = name;
  s.dir = dir;
  s.category = name.substr(0, name.find('/'));
  s.title = j.value("title", name);
  if (j.contains("pkb_id")) s.pkb_id = j["pkb_id"].get<int>();
  if (j.contains("world_size")) {
    s.min_world = j["world_size"].value("min", 2);
    s.max_world = j["world_size"].value("max", 72);
    if (s.min_world < 1 || s.max_world < s.min_world) r.fail("world_size", "need 1 <= min <= max");
  }
  if (j.contains("dtypes")) {
    for (const auto& d : j["dtypes"]) {
      dtype_from_string(d.get<std::string>());
      s.dtypes.push_back(d.get<std::string>());
    }
  }
  if (!j.contains("sizes") || !j["sizes"].is_array() || j["sizes"].empty())
    r.fail("sizes", "expected a non-empty array of {\"name\": ..., \"dims\": {...}}");
  for (const auto& p : j["sizes"]) {
    std::string pname = p.value("name", "");
    if (pname.empty()) r.fail("sizes", "a preset without 'name'");
    if (s.sizes.count(pname)) r.fail("sizes", "preset '" + pname + "' given twice");
    auto& dims = s.sizes[pname];
    const nlohmann::json dims_json = p.value("dims", nlohmann::json::object());
    for (const auto& [k, v] : dims_json.items()) {
      if (k == "W" || k == "R") r.fail("sizes." + pname, "'W' and 'R' are reserved names");
      dims[k] = expr_string(r, "sizes." + pname + "." + k, v);
    }
    s.size_names.push_back(pname);
  }
  if (j.contains("default_sizes")) {
    for (const auto& d : j["default_sizes"]) {
      std::string dn = d.get<std::string>();
      if (!s.sizes.count(dn)) r.fail("default_sizes", "unknown preset '" + dn + "'");
      s.default_sizes.push_back(dn);
    }
  } else {
    s.default_sizes = s.size_names;
  }
  for (const char* key : {"inputs", "outputs"}) {
    if (!j.contains(key) || !j[key].is_array() || j[key].empty())
      r.fail(key, "expected a non-empty array of tensors");
    bool out = std::string(key) == "outputs";
    for (const auto& t : j[key]) (out ? s.outputs : s.inputs).push_back(parse_tensor(r, t, key, out, s.dtypes));
  }
  resolve_in_place(r, s);
  if (j.contains("requires")) {
    if (!j["requires"].is_array()) r.fail("requires", "expected an array of {\"expr\": ..., \"why\": ...}");
    for (const auto& q : j["requires"]) {
      if (!q.is_object() || !q.contains("expr") || !q["expr"].is_string() || !q.contains("why") ||
          !q["why"].is_string() || q["why"].get<std::string>().empty())
        r.fail("requires", "each entry needs \"expr\" (a condition on the dims, e.g. \"K <= E\") and \"why\" "
                           "(what breaks otherwise), both strings");
      s.requirements.push_back({expr_string(r, "requires", q["expr"]), q["why"].get<std::string>()});
    }
  }
  if (j.contains("structure_check")) {
    const auto& c = j["structure_check"];
    const char* shape = "expected {\"worlds\": [W, ...], \"why\": \"what is missing at smaller worlds\"}";
    if (!c.is_object() || !c.contains("worlds") || !c["worlds"].is_array() || c["worlds"].empty() ||
        !c.contains("why") || !c["why"].is_string() || c["why"].get<std::string>().empty())
      r.fail("structure_check", shape);
    for (const auto& w : c["worlds"]) {
      if (!w.is_number_integer()) r.fail("structure_check.worlds", "each world is a whole number");
      const int world = w.get<int>();
      if (world <= s.min_world || world > s.max_world)
        r.fail("structure_check.worlds", "world " + std::to_string(world) + " is not inside " +
                                             std::to_string(s.min_world + 1) + ".." + std::to_string(s.max_world) +
                                             " (above the smallest world, inside world_size)");
      if (!s.structure_check.worlds.empty() && world <= s.structure_check.worlds.back())
        r.fail("structure_check.worlds", "list the worlds in ascending order, each once");
      s.structure_check.worlds.push_back(world);
    }
    s.structure_check.why = c["why"].get<std::string>();
  }
  if (j.contains("cost")) {
    const auto& c = j["cost"];
    if (c.contains("flops")) s.cost.flops = expr_string(r, "cost.flops", c["flops"]);
    if (c.contains("hbm_bytes")) s.cost.hbm_bytes = expr_string(r, "cost.hbm_bytes", c["hbm_bytes"]);
    if (c.contains("link_bytes")) s.cost.link_bytes = expr_string(r, "cost.link_bytes", c["link_bytes"]);
  }
  if (j.contains("tags"))
    for (const auto& t : j["tags"]) s.tags.push_back(t.get<std::string>());
  return s;
}

Spec load_spec_file(const std::filesystem::path& problem_json, const std::string& name) {
  std::ifstream in(problem_json);
  if (!in) throw UsageError("cannot read " + problem_json.string());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(problem_json.string() + ": not valid JSON: " + e.what());
  }
  try {
    return parse_spec(j, name, problem_json.parent_path());
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(problem_json.string() + ": " + e.what());
  }
}

}  // namespace mgk::problems
