#include "wire/protocol.h"

#include <unistd.h>

#include <cmath>

#include "common/error.h"
#include "mgk/dtype_table.h"

// std::optional as null-or-value (nlohmann 3.11.2 has no serializer of its own for it).
namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& o) {
    if (o) j = *o;
    else j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& o) {
    if (j.is_null()) o.reset();
    else o = j.get<T>();
  }
};
}  // namespace nlohmann

namespace mgk::wire {

NLOHMANN_JSON_SERIALIZE_ENUM(Who, {{Who::kReference, "reference"}, {Who::kCandidate, "candidate"}})
NLOHMANN_JSON_SERIALIZE_ENUM(Fault, {{Fault::kSolution, "solution"}, {Fault::kHarness, "harness"}})
NLOHMANN_JSON_SERIALIZE_ENUM(FailureKind, {{FailureKind::kNone, "none"},
                                           {FailureKind::kMismatch, "mismatch"},
                                           {FailureKind::kModifiedInput, "modified_input"},
                                           {FailureKind::kIncomplete, "incomplete"}})
NLOHMANN_JSON_SERIALIZE_ENUM(Dist, {{Dist::kNormal, "normal"}, {Dist::kUniform, "uniform"}, {Dist::kRandint, "randint"},
                                     {Dist::kZipf, "zipf"}})
NLOHMANN_JSON_SERIALIZE_ENUM(CheckKind, {{CheckKind::kExact, "exact"},
                                         {CheckKind::kRounding, "rounding"},
                                         {CheckKind::kAllclose, "allclose"}})
NLOHMANN_JSON_SERIALIZE_ENUM(RequestKind, {{RequestKind::kSymAlloc, "sym_alloc"}, {RequestKind::kBarrier, "barrier"}})

const char* to_string(Who w) { return w == Who::kReference ? "reference" : "candidate"; }
const char* to_string(FailureKind k) {
  switch (k) {
    case FailureKind::kNone: return "none";
    case FailureKind::kMismatch: return "mismatch";
    case FailureKind::kModifiedInput: return "modified_input";
    case FailureKind::kIncomplete: return "incomplete";
  }
  return "?";
}

}  // namespace mgk::wire

// mgk_dtype travels by name, from the one table.
NLOHMANN_JSON_NAMESPACE_BEGIN
template <>
struct adl_serializer<mgk_dtype> {
  static void to_json(json& j, mgk_dtype t) { j = mgk::dtype_name(t); }
  static void from_json(const json& j, mgk_dtype& t) {
    const mgk::DTypeInfo* d = mgk::dtype_info(std::string_view(j.get<std::string>()));
    if (!d) throw mgk::Error("protocol: unknown dtype " + j.dump());
    t = d->id;
  }
};
NLOHMANN_JSON_NAMESPACE_END

namespace mgk::wire {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CheckSpec, kind, factor, unit_roundoff, atol, rtol)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(InputInit, dist, a, b, exponent, row, zero_every, tiny_every, tiny, massive_every, massive)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TensorPlan, name, dtype, shape, numel, symmetric, alloc_bytes, init, check, in_place_of)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Dim, name, value)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PresetPlan, dims, inputs, outputs)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Verdict, correct, kind, failure, mismatch, worst_ratio)

// A NaN `got` travels as null (JSON has no NaN).
void to_json(nlohmann::json& j, const Mismatch& m) {
  j = {{"output", m.output},   {"rank", m.rank},         {"index", m.index},   {"flat_index", m.flat_index},
       {"got", m.got},         {"expected", m.expected}, {"bound", m.bound},   {"failures", m.failures},
       {"numel", m.numel}};
}
void from_json(const nlohmann::json& j, Mismatch& m) {
  Mismatch d;
  m.output = j.value("output", d.output);
  m.rank = j.value("rank", d.rank);
  m.index = j.value("index", d.index);
  m.flat_index = j.value("flat_index", d.flat_index);
  m.got = j.contains("got") ? j.at("got").get<std::optional<double>>() : std::nullopt;
  m.expected = j.value("expected", d.expected);
  m.bound = j.value("bound", d.bound);
  m.failures = j.value("failures", d.failures);
  m.numel = j.value("numel", d.numel);
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Init, nccl_id, timed)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Load, reference, candidate, candidate_is_reference)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Prepare, plan)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Trial, who, seed)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(BackToBack, who, seed, calls)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Time, who, block_seed, warmup, iterations, checked)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TimeFloor, warmup, iterations)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Failure, fault, who, error, candidate_gone)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(NcclIdMade, nccl_id)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Started, gpu, sms, write_guard)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Loaded, protocol_overhead_us, protocol_spread_us)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Judged, verdict)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TimedCalls, verdict, times_us, outside_us, checked)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FloorTimes, times_us)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CallTime, us)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Request, kind, rank, bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Response, kind, ok, error, mapped)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Phase, rank, what)

namespace cand {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Init, device, rank, world, timed)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Load, library)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Probe, flags)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MapBuffer, id, bytes, mapped, symmetric)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TensorRef, plan, buffer)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Setup, rank, world, num_sms, dims, input_sets, outputs, snapshots, flags)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Call, set, aligned)
}  // namespace cand

namespace {

// Each alternative of a command variant under its name; the order of names follows the
// variant's alternatives.
constexpr const char* kCommandNames[] = {"whoami", "nccl_id",  "init",     "load",     "prepare", "trial",
                                         "back_to_back", "time", "time_floor", "teardown", "exit"};
constexpr const char* kCandidateNames[] = {"init", "load", "probe", "map_buffer", "setup", "call", "teardown", "exit"};
constexpr const char* kAnswerNames[] = {"done",   "failure",     "nccl_id_made", "started", "loaded",
                                        "judged", "timed_calls", "floor_times",  "call_time"};
static_assert(std::size(kCommandNames) == std::variant_size_v<Command>);
static_assert(std::size(kCandidateNames) == std::variant_size_v<cand::Command>);
static_assert(std::size(kAnswerNames) == std::variant_size_v<Answer>);

template <typename T>
nlohmann::json body_of(const T& m) {
  if constexpr (std::is_empty_v<T>) {
    return nlohmann::json::object();
  } else {
    return nlohmann::json(m);
  }
}

template <typename Variant, size_t I = 0>
Variant variant_from(size_t index, const nlohmann::json& body) {
  if constexpr (I < std::variant_size_v<Variant>) {
    if (index == I) {
      using T = std::variant_alternative_t<I, Variant>;
      if constexpr (std::is_empty_v<T>) return T{};
      else return body.get<T>();
    }
    return variant_from<Variant, I + 1>(index, body);
  } else {
    throw Error("protocol: command index out of range");
  }
}

template <typename Variant, size_t N>
Variant decode_variant(const nlohmann::json& j, const char* const (&names)[N], const char* what,
                       const char* key = "cmd") {
  const std::string name = j.value(key, "");
  for (size_t i = 0; i < N; ++i)
    if (name == names[i]) return variant_from<Variant>(i, j.value("body", nlohmann::json::object()));
  throw Error(std::string("protocol: unknown ") + what + " '" + name + "'");
}

template <typename Variant, size_t N>
nlohmann::json encode_variant(const Variant& v, const char* const (&names)[N], const char* type) {
  nlohmann::json body = std::visit([](const auto& m) { return body_of(m); }, v);
  return {{"type", type}, {"cmd", names[v.index()]}, {"body", std::move(body)}};
}

}  // namespace

std::string describe(const Command& c) { return kCommandNames[c.index()]; }
const char* answer_name(const Answer& a) { return kAnswerNames[a.index()]; }

void Reply::throw_unexpected(const char* wanted) const {
  const Failure* f = failure();
  throw Error("protocol: rank " + std::to_string(rank) + " answered with '" + answer_name(answer) + "' where '" +
              wanted + "' was due" + (f ? ": " + f->error : std::string()));
}

Reply failure_reply(int rank, Fault fault, std::optional<Who> who, std::string error) {
  return Reply{rank, Failure{fault, who, std::move(error), false}};
}

// A reply travels as {"rank": r, "answer": kind, "body": the answer's fields}.
void to_json(nlohmann::json& j, const Reply& r) {
  j = {{"rank", r.rank},
       {"answer", answer_name(r.answer)},
       {"body", std::visit([](const auto& a) { return body_of(a); }, r.answer)}};
}
void from_json(const nlohmann::json& j, Reply& r) {
  r.rank = j.value("rank", -1);
  r.answer = decode_variant<Answer>(j, kAnswerNames, "reply", "answer");
}

void send(Channel& c, const Command& m) { c.send(encode_variant(m, kCommandNames, "command")); }
void send(Channel& c, const cand::Command& m, const std::vector<int>& fds) {
  c.send(encode_variant(m, kCandidateNames, "candidate_command"), fds);
}
void send(Channel& c, const Reply& m) { c.send({{"type", "reply"}, {"body", m}}); }
void send(Channel& c, const Request& m, const std::vector<int>& fds) { c.send({{"type", "request"}, {"body", m}}, fds); }
void send(Channel& c, const Response& m, const std::vector<int>& fds) {
  c.send({{"type", "response"}, {"body", m}}, fds);
}
void send(Channel& c, const Phase& m) { c.send({{"type", "phase"}, {"body", m}}); }

Frame receive(Channel& c) {
  Message m = c.receive();
  Frame f;
  f.fds = std::move(m.fds);
  try {
    const std::string type = m.body.value("type", "");
    const nlohmann::json& body = m.body.contains("body") ? m.body.at("body") : m.body;
    if (type == "command") f.body = decode_variant<Command>(m.body, kCommandNames, "command");
    else if (type == "candidate_command") f.body = decode_variant<cand::Command>(m.body, kCandidateNames, "candidate command");
    else if (type == "reply") f.body = body.get<Reply>();
    else if (type == "request") f.body = body.get<Request>();
    else if (type == "response") f.body = body.get<Response>();
    else if (type == "phase") f.body = body.get<Phase>();
    else throw Error("protocol: unknown frame type '" + type + "'");
  } catch (const nlohmann::json::exception& e) {
    for (int fd : f.fds) ::close(fd);
    throw Error(std::string("protocol: malformed frame (") + e.what() + "): " + m.body.dump().substr(0, 300));
  } catch (...) {
    for (int fd : f.fds) ::close(fd);
    throw;
  }
  return f;
}

nlohmann::json to_json(const Verdict& v) { return nlohmann::json(v); }
nlohmann::json to_json(const Mismatch& m) { return nlohmann::json(m); }
Mismatch mismatch_from_json(const nlohmann::json& j) { return j.get<Mismatch>(); }

}  // namespace mgk::wire
