#include "problems/resolve.h"

#include <algorithm>
#include <regex>
#include <set>
#include <tuple>

#include "common/error.h"
#include "common/format.h"

namespace mgk::problems {

namespace {

void check_world(const Spec& spec, int world_size) {
  if (world_size < spec.min_world || world_size > spec.max_world)
    throw UsageError(spec.name + " runs on " + std::to_string(spec.min_world) + " to " +
                     std::to_string(spec.max_world) + " ranks, not " + std::to_string(world_size));
}

std::string choose_dtype(const Spec& spec, const std::string& dtype) {
  if (dtype.empty()) return spec.dtypes.empty() ? "" : spec.dtypes.front();
  if (std::find(spec.dtypes.begin(), spec.dtypes.end(), dtype) == spec.dtypes.end()) {
    throw UsageError(spec.name + " has no dtype '" + dtype + "' (valid: " + join(spec.dtypes) + ")");
  }
  return dtype;
}

ResolvedTensor resolve_tensor(const Spec& spec, const TensorSpec& t, const std::string& dtype,
                              const expr::Vars& vars, int world_size) {
  ResolvedTensor r;
  r.name = t.name;
  r.dtype = dtype_from_string(t.dtype == "T" ? dtype : t.dtype);
  r.symmetric = t.symmetric;
  r.spec = &t;
  // The element count and the bytes must fit in 64 bits: a spec whose sizes overflow them
  // is an error, not a negative size.
  auto shape_at = [&](const expr::Vars& v) {
    std::vector<long long> shape;
    long long n = 1, bytes = 0;
    bool overflow = false;
    for (const auto& e : t.shape) {
      shape.push_back(with_context("in " + spec.name + " tensor " + t.name,
                                   [&] { return expr::evaluate_count(e, v); }));
      overflow |= __builtin_mul_overflow(n, shape.back(), &n);
    }
    overflow |= __builtin_mul_overflow(n, static_cast<long long>(dtype_bytes(r.dtype)), &bytes);
    if (overflow) {
      std::string dims;
      for (long long d : shape) dims += (dims.empty() ? "" : ",") + std::to_string(d);
      throw UsageError(spec.name + " tensor " + t.name + " has shape [" + dims +
                       "]: more bytes than 64 bits can count; check the size preset's dims");
    }
    return std::make_tuple(shape, n, bytes);
  };
  long long bytes = 0;
  std::tie(r.shape, r.numel, bytes) = shape_at(vars);
  for (int rank = 0; rank < world_size; ++rank) {
    expr::Vars v = vars;
    v["R"] = rank;
    r.max_bytes_over_ranks = std::max(r.max_bytes_over_ranks, std::get<2>(shape_at(v)));
  }
  return r;
}

}  // namespace

expr::Vars size_dims(const Spec& spec, const std::string& size, int world_size) {
  auto it = spec.sizes.find(size);
  if (it == spec.sizes.end()) {
    throw UsageError(spec.name + " has no size preset '" + size + "' (valid: " + join(spec.size_names) + ")");
  }
  expr::Vars vars{{"W", double(world_size)}};
  // Dims may refer to W and to dims defined before them in the file's order; std::map
  // order is alphabetical, so resolve by repeated passes.
  std::map<std::string, std::string> pending = it->second;
  while (!pending.empty()) {
    size_t before = pending.size();
    for (auto p = pending.begin(); p != pending.end();) {
      auto needed = expr::names(p->second);
      bool ready = std::all_of(needed.begin(), needed.end(), [&](const std::string& n) { return vars.count(n); });
      if (ready) {
        vars[p->first] = with_context("in " + spec.name + " size " + size,
                                      [&] { return double(expr::evaluate_count(p->second, vars)); });
        p = pending.erase(p);
      } else {
        ++p;
      }
    }
    if (pending.size() == before)
      throw UsageError(spec.name + " size " + size + ": dim '" + pending.begin()->first +
                       "' refers to an unknown or circular name");
  }
  const std::string where =
      spec.requirements.empty() ? "" : spec.name + " size " + size + " at W = " + std::to_string(world_size);
  for (const auto& q : spec.requirements) {
    if (with_context("in " + where + " requirement", [&] { return expr::evaluate(q.expr, vars); }) != 0) continue;
    std::string values;
    for (const auto& n : expr::names(q.expr))  // a ternary's branch not taken may name anything
      if (vars.count(n)) values += (values.empty() ? "" : ", ") + n + " = " + std::to_string((long long)vars.at(n));
    // scripts/suite-on-one-gpu.sh tells this refusal from a failure by "is outside the problem".
    throw UsageError(where + " is outside the problem: it needs " + q.expr + " (" + values + "): " + q.why);
  }
  return vars;
}

Resolved resolve(const Spec& spec, const std::string& size, const std::string& dtype,
                 int world_size, int rank) {
  check_world(spec, world_size);
  Resolved r;
  r.size = size;
  r.world_size = world_size;
  r.rank = rank;
  std::string dt = choose_dtype(spec, dtype);
  r.dtype = dtype_from_string(dt.empty() ? "f32" : dt);
  r.dims = size_dims(spec, size, world_size);
  r.dims["R"] = rank;
  for (const auto& t : spec.inputs) r.inputs.push_back(resolve_tensor(spec, t, dt, r.dims, world_size));
  for (const auto& t : spec.outputs) {
    r.outputs.push_back(resolve_tensor(spec, t, dt, r.dims, world_size));
    for (size_t i = 0; i < spec.inputs.size(); ++i)
      if (!t.in_place_of.empty() && spec.inputs[i].name == t.in_place_of) r.outputs.back().in_place_of = int(i);
  }
  expr::Vars cv = r.dims;
  cv["ELT"] = dtype_bytes(r.dtype);  // bytes per element of the problem's dtype
  with_context("in " + spec.name + " cost model", [&] {
    r.cost.flops = expr::evaluate(spec.cost.flops, cv);
    r.cost.hbm_bytes = expr::evaluate(spec.cost.hbm_bytes, cv);
    r.cost.link_bytes = expr::evaluate(spec.cost.link_bytes, cv);
  });
  return r;
}

namespace {

// The dims a tensor's rows are made of: those named in the last dimension of some tensor's
// shape (["W * C"]: C, a chunk per peer; [B, S, D]: D). A batch or head count is not a
// length in memory, so its bytes say nothing about tails.
std::set<std::string> row_dims(const Spec& spec) {
  static const std::regex name(R"([A-Za-z_]\w*)");
  std::set<std::string> out;
  for (const auto* group : {&spec.inputs, &spec.outputs})
    for (const auto& t : *group)
      if (!t.shape.empty())
        for (std::sregex_iterator it(t.shape.back().begin(), t.shape.back().end(), name), end; it != end; ++it)
          out.insert(it->str());
  return out;
}

}  // namespace

std::vector<std::string> tail_sizes(const Spec& spec, const std::vector<std::string>& sizes,
                                    const std::string& dtype, int world_size) {
  const std::set<std::string> rows = row_dims(spec);
  std::vector<std::string> out;
  for (const auto& size : sizes) {
    std::string found;
    for (int rank = 0; rank < world_size && found.empty(); ++rank) {
      Resolved r = resolve(spec, size, dtype, world_size, rank);
      for (const auto* group : {&r.inputs, &r.outputs})
        for (const auto& t : *group)
          // A scalar (shape []) is one value, not a row a vector can overrun.
          if (found.empty() && !t.shape.empty() && (t.numel * dtype_bytes(t.dtype)) % 16 != 0)
            found = size + " (" + t.name + ": " + std::to_string(t.numel * dtype_bytes(t.dtype)) + " B on rank " +
                    std::to_string(rank) + ")";
      // A row or a chunk per peer (a dim such as C) whose bytes break 16-byte vectors is a
      // tail too, even when the whole tensor's bytes are a multiple of 16.
      for (const auto& [name, value] : r.dims) {
        if (!found.empty() || name == "W" || name == "R" || !rows.count(name)) continue;
        const long long bytes = (long long)value * dtype_bytes(r.dtype);
        if (bytes % 16 != 0)
          found = size + " (" + name + " = " + std::to_string((long long)value) + ": " + std::to_string(bytes) + " B)";
      }
    }
    if (!found.empty()) out.push_back(found);
  }
  return out;
}

ResolvedCost max_cost_over_ranks(const Spec& spec, const std::string& size,
                                 const std::string& dtype, int world_size) {
  ResolvedCost m;
  for (int rank = 0; rank < world_size; ++rank) {
    auto c = resolve(spec, size, dtype, world_size, rank).cost;
    m.flops = std::max(m.flops, c.flops);
    m.hbm_bytes = std::max(m.hbm_bytes, c.hbm_bytes);
    m.link_bytes = std::max(m.link_bytes, c.link_bytes);
  }
  return m;
}

}  // namespace mgk::problems
