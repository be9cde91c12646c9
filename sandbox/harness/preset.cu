#include "preset.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "mgk/gen.cuh"

namespace mgk::harness {

namespace {

void ck(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw std::runtime_error(what + ": " + cudaGetErrorString(e));
}

void sync_solution(const std::string& role, const char* when) {
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess)
    throw SolutionFault("CUDA error " + std::string(when) + " of the " + role + ": " + cudaGetErrorString(e));
}

mgk_dtype parse_dtype(const std::string& s) {
  static const std::pair<const char*, mgk_dtype> table[] = {
      {"bf16", MGK_BF16}, {"f16", MGK_F16}, {"f32", MGK_F32}, {"f64", MGK_F64},
      {"i32", MGK_I32},   {"i64", MGK_I64}, {"u8", MGK_U8}};
  for (auto& [n, t] : table)
    if (s == n) return t;
  throw std::runtime_error("unknown dtype " + s);
}

TensorPlan parse_plan(const nlohmann::json& j, bool output) {
  TensorPlan p;
  p.name = j.at("name").get<std::string>();
  p.dtype = parse_dtype(j.at("dtype").get<std::string>());
  p.shape = j.at("shape").get<std::vector<int64_t>>();
  p.numel = j.at("numel").get<int64_t>();
  p.symmetric = j.at("symmetric").get<bool>();
  p.alloc_bytes = j.at("alloc_bytes").get<size_t>();
  if (!output) {
    const auto& init = j.at("init");
    std::string d = init.at("dist").get<std::string>();
    p.gen.dist = d == "normal" ? MGK_DIST_NORMAL : d == "uniform" ? MGK_DIST_UNIFORM : MGK_DIST_RANDINT;
    p.gen.a = init.at("a").get<double>();
    p.gen.b = init.at("b").get<double>();
    p.gen.dtype = p.dtype;
  } else {
    const auto& c = j.at("check");
    std::string k = c.at("kind").get<std::string>();
    p.check.kind = k == "exact" ? CheckKind::kExact : k == "rounding" ? CheckKind::kRounding : CheckKind::kAllclose;
    p.check.factor = c.value("factor", 1.0);
    p.check.unit_roundoff = c.value("unit_roundoff", 0.0);
    p.check.atol = c.value("atol", 0.0);
    p.check.rtol = c.value("rtol", 0.0);
  }
  return p;
}

std::string shape_index(const std::vector<int64_t>& shape, long long flat) {
  std::vector<long long> idx(shape.size());
  for (int d = int(shape.size()) - 1; d >= 0; --d) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

}  // namespace

Preset::Preset(const nlohmann::json& plan, const RankInfo& info, SymmetricHeap& heap, BrokerClient& broker,
               Solution& reference, Solution* candidate, bool candidate_gets_comm)
    : info_(info), broker_(broker), reference_(reference), candidate_(candidate) {
  for (const auto& j : plan.at("inputs")) in_plans_.push_back(parse_plan(j, false));
  for (const auto& j : plan.at("outputs")) out_plans_.push_back(parse_plan(j, true));
  ck(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream");
  ck(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking), "side stream");

  auto make = [&](const TensorPlan& p, void*& data, const void* const*& peers, const void* const*& host_peers) {
    if (p.symmetric) {
      const SymAllocation& a = heap.allocate(p.alloc_bytes);
      data = a.host_peers[info_.rank];
      peers = a.device_peers;
      host_peers = a.host_peers.data();
    } else {
      size_t bytes = std::max<size_t>(p.alloc_bytes, 16);
      ck(cudaMalloc(&data, bytes), "allocate " + p.name);
      owned_.push_back(data);
      peers = nullptr;
      host_peers = nullptr;
    }
  };
  auto to_tensor = [](const TensorPlan& p, void* data, const void* const* peers, const void* const* host_peers) {
    mgk_tensor t{};
    t.name = p.name.c_str();
    t.dtype = p.dtype;
    t.ndim = int(p.shape.size());
    for (int d = 0; d < t.ndim; ++d) t.shape[d] = p.shape[d];
    t.numel = p.numel;
    t.data = data;
    t.peers = const_cast<void* const*>(peers);
    t.host_peers = const_cast<void* const*>(host_peers);
    return t;
  };
  inputs_.resize(kInputSets);
  for (int s = 0; s < kInputSets; ++s)
    for (const auto& p : in_plans_) {
      void* d;
      const void* const* pe;
      const void* const* hp;
      make(p, d, pe, hp);
      inputs_[s].push_back(to_tensor(p, d, pe, hp));
    }
  for (const auto& p : out_plans_) {
    void* d;
    const void* const* pe;
    const void* const* hp;
    make(p, d, pe, hp);
    outputs_.push_back(to_tensor(p, d, pe, hp));
    void* snap = nullptr;
    void* exp = nullptr;
    float* scale = nullptr;
    size_t n = size_t(std::max<int64_t>(p.numel, 1));
    ck(cudaMalloc(&snap, n * dtype_size(p.dtype)), "snapshot buffer");
    ck(cudaMalloc(&exp, n * 8), "oracle buffer");
    owned_.push_back(snap);
    owned_.push_back(exp);
    if (p.check.kind == CheckKind::kRounding) {
      ck(cudaMalloc(&scale, n * sizeof(float)), "oracle scale buffer");
      owned_.push_back(scale);
    }
    snapshots_.push_back(snap);
    expected_.push_back(exp);
    scales_.push_back(scale);
  }
  flags_ = &heap.allocate(sizeof(uint64_t) * info_.world);
  flush_bytes_ = std::max<size_t>(2 * info_.l2_bytes, 8u << 20);
  ck(cudaMalloc(&flush_, flush_bytes_), "L2 flush buffer");
  owned_.push_back(flush_);
  ck(cudaMalloc(&hash_slot_, sizeof(unsigned long long)), "hash slot");
  owned_.push_back(hash_slot_);
  ck(cudaMalloc(&before_slot_, sizeof(unsigned long long) * std::max<size_t>(in_plans_.size(), 1)), "hash slots");
  owned_.push_back(before_slot_);

  SetupArgs setup{info_.rank, info_.world, info_.device, info_.num_sms, info_.comm, {}, {}, {}, {}, &heap, &broker_};
  for (const auto& [k, v] : plan.at("dims").items()) {
    setup.dim_names.push_back(k);
    setup.dim_values.push_back(v.get<int64_t>());
  }
  for (const auto& p : in_plans_) setup.inputs.push_back(to_tensor(p, nullptr, nullptr, nullptr));
  for (const auto& p : out_plans_) setup.outputs.push_back(to_tensor(p, nullptr, nullptr, nullptr));
  reference_.setup(setup);
  if (candidate_) {
    setup.nccl_comm = candidate_gets_comm ? info_.comm : nullptr;
    try {
      candidate_->setup(std::move(setup));
    } catch (const std::exception& e) {
      throw SolutionFault(e.what());
    }
  }
  ck(cudaDeviceSynchronize(), "after setup");
}

Preset::~Preset() {
  cudaDeviceSynchronize();
  if (candidate_) candidate_->teardown();
  reference_.teardown();
  for (void* p : owned_) cudaFree(p);
  cudaStreamDestroy(stream_);
  cudaStreamDestroy(side_);
}

std::vector<mgk_input_gen> Preset::gens_for(uint64_t seed) const {
  std::vector<mgk_input_gen> g;
  for (size_t t = 0; t < in_plans_.size(); ++t) {
    mgk_input_gen x = in_plans_[t].gen;
    x.seed = mgk::mix64(seed + 0x51ed270b2c1fa3ull * (t + 1));
    g.push_back(x);
  }
  return g;
}

void Preset::fill_inputs(int set, uint64_t seed) {
  auto gens = gens_for(seed);
  for (size_t t = 0; t < in_plans_.size(); ++t)
    fill_input(gens[t], info_.rank, inputs_[set][t].data, in_plans_[t].numel, stream_);
}

void Preset::poison_outputs(cudaStream_t s) {
  // 0xFF bytes are NaN in every float dtype and -1 in every integer dtype.
  for (size_t o = 0; o < outputs_.size(); ++o)
    ck(cudaMemsetAsync(outputs_[o].data, 0xFF, std::max<size_t>(out_plans_[o].numel * dtype_size(out_plans_[o].dtype), 0), s),
       "poison outputs");
}

void Preset::hash_inputs_async(unsigned long long* slots) {
  for (size_t t = 0; t < in_plans_.size(); ++t)
    hash_bytes(inputs_[0][t].data, in_plans_[t].numel * dtype_size(in_plans_[t].dtype), slots + t, stream_);
}

std::vector<unsigned long long> Preset::hash_inputs() {
  std::vector<unsigned long long> h;
  for (int s = 0; s < 1; ++s)
    for (size_t t = 0; t < in_plans_.size(); ++t) {
      hash_bytes(inputs_[s][t].data, in_plans_[t].numel * dtype_size(in_plans_[t].dtype), hash_slot_, stream_);
      unsigned long long v = 0;
      ck(cudaMemcpyAsync(&v, hash_slot_, sizeof(v), cudaMemcpyDeviceToHost, stream_), "hash readback");
      ck(cudaStreamSynchronize(stream_), "hash sync");
      h.push_back(v);
    }
  return h;
}

void Preset::snapshot_after(cudaEvent_t done) {
  // Device-side: the copy starts when `done` completes, with no host round trip, so work
  // the solution left running on other streams is caught half-way.
  ck(cudaStreamWaitEvent(side_, done, 0), "snapshot wait");
  for (size_t o = 0; o < outputs_.size(); ++o)
    ck(cudaMemcpyAsync(snapshots_[o], outputs_[o].data, out_plans_[o].numel * dtype_size(out_plans_[o].dtype),
                       cudaMemcpyDeviceToDevice, side_),
       "snapshot copy");
}

nlohmann::json Preset::compare(const std::vector<void*>& got) {
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const TensorPlan& p = out_plans_[o];
    CheckOutcome c = check_output(got[o], p.dtype, p.numel, expected_[o], scales_[o], p.check, stream_);
    if (c.failures == 0) continue;
    nlohmann::json m{{"output", p.name},
                     {"rank", info_.rank},
                     {"index", shape_index(p.shape, c.first_index)},
                     {"flat_index", c.first_index},
                     {"got", c.got_nan ? nlohmann::json("nan") : nlohmann::json(c.got)},
                     {"expected", c.expected},
                     {"bound", c.bound},
                     {"failures", c.failures},
                     {"numel", p.numel}};
    return m;
  }
  return nullptr;
}

nlohmann::json Preset::judge(int set, uint64_t seed) {
  // The oracle runs after the solution's call has finished, and its results are wiped
  // right after the comparison: a candidate never has a chance to read them.
  auto gens = gens_for(seed);
  std::vector<mgk_tensor> out_shapes = outputs_;
  for (auto& t : out_shapes) t.data = nullptr, t.peers = nullptr, t.host_peers = nullptr;
  mgk_oracle_args args{};
  args.inputs = inputs_[set].data();
  args.n_in = int(inputs_[set].size());
  args.gens = gens.data();
  args.outputs = out_shapes.data();
  args.n_out = int(out_shapes.size());
  args.expected = expected_.data();
  args.scale = scales_.data();
  reference_.oracle(args, stream_);
  ck(cudaStreamSynchronize(stream_), "oracle");
  nlohmann::json result{{"correct", true}};
  nlohmann::json snap = compare(snapshots_);
  if (!snap.is_null()) {
    std::vector<void*> live;
    for (auto& t : outputs_) live.push_back(t.data);
    nlohmann::json final_state = compare(live);
    result["correct"] = false;
    if (final_state.is_null()) {
      result["failure"] = "outputs were incomplete when the work enqueued on the timed stream finished: "
                          "work on another stream (or a peer still writing) was not joined back before returning";
      result["mismatch"] = snap;
    } else {
      result["failure"] = "output mismatch";
      result["mismatch"] = final_state;
    }
  }
  for (size_t o = 0; o < outputs_.size(); ++o) {
    ck(cudaMemsetAsync(expected_[o], 0, std::max<int64_t>(out_plans_[o].numel, 1) * 8, stream_), "wipe oracle");
    if (scales_[o]) ck(cudaMemsetAsync(scales_[o], 0, std::max<int64_t>(out_plans_[o].numel, 1) * 4, stream_), "wipe scale");
  }
  ck(cudaStreamSynchronize(stream_), "wipe oracle sync");
  return result;
}

void Preset::call_and_snapshot(Solution& who, int set, const char* when) {
  cudaEvent_t done;
  ck(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "event");
  try {
    who.run(inputs_[set].data(), int(inputs_[set].size()), outputs_.data(), int(outputs_.size()), stream_);
    ck(cudaEventRecord(done, stream_), "record");
  } catch (const std::exception& e) {
    cudaEventDestroy(done);
    throw SolutionFault(e.what());
  }
  snapshot_after(done);
  sync_solution(who.role(), when);
  cudaEventDestroy(done);
}

nlohmann::json Preset::trial(Solution& who, uint64_t seed) {
  fill_inputs(0, seed);
  poison_outputs(stream_);
  ck(cudaStreamSynchronize(stream_), "fill inputs");
  auto before = hash_inputs();
  broker_.barrier();  // every rank's inputs are ready and outputs poisoned before anyone runs

  broker_.phase(who.role() + " run");
  call_and_snapshot(who, 0, "during the run");
  broker_.barrier();  // peers are done writing (and reading) before inputs are re-hashed

  broker_.phase(who.role() + " check");
  auto after = hash_inputs();
  for (size_t t = 0; t < in_plans_.size(); ++t)
    if (before[t] != after[t])
      return {{"correct", false},
              {"failure", "modified its input '" + in_plans_[t].name + "' on rank " + std::to_string(info_.rank) +
                              " (inputs must stay unchanged)"}};
  return judge(0, seed);
}

nlohmann::json Preset::back_to_back(Solution& who, uint64_t seed, int calls) {
  broker_.phase(who.role() + " back-to-back calls");
  broker_.barrier();  // everyone is done with earlier work; from here on, no barrier
  nlohmann::json first_failure;
  for (int i = 0; i < calls; ++i) {
    const uint64_t call_seed = mgk::mix64(seed + uint64_t(i) * 0x9e3779b97f4a7c15ull);
    const int set = i % kInputSets;
    fill_inputs(set, call_seed);
    call_and_snapshot(who, set, "during back-to-back calls");
    nlohmann::json verdict = judge(set, call_seed);
    if (first_failure.is_null() && !verdict["correct"].get<bool>()) {
      first_failure = verdict;
      first_failure["failure"] = "call " + std::to_string(i + 1) + " of " + std::to_string(calls) +
                                 " made back to back (no barrier between calls): " +
                                 verdict["failure"].get<std::string>();
    }
  }
  broker_.barrier();
  return first_failure.is_null() ? nlohmann::json{{"correct", true}} : first_failure;
}

EventPairs::EventPairs(int n) : start(n), end(n) {
  for (int i = 0; i < n; ++i) {
    ck(cudaEventCreate(&start[i]), "event");
    ck(cudaEventCreate(&end[i]), "event");
  }
}

EventPairs::~EventPairs() {
  for (size_t i = 0; i < start.size(); ++i) {
    if (start[i]) cudaEventDestroy(start[i]);
    if (end[i]) cudaEventDestroy(end[i]);
  }
}

std::vector<double> EventPairs::elapsed_us(int skip) const {
  std::vector<double> us;
  for (size_t i = size_t(skip); i < start.size(); ++i) {
    float ms = 0;
    ck(cudaEventElapsedTime(&ms, start[i], end[i]), "elapsed");
    us.push_back(double(ms) * 1000.0);
  }
  return us;
}

void Preset::timed_loop(const std::function<void()>& call, uint64_t block_seed, EventPairs& events,
                        uint64_t* last_seed) {
  const int total = int(events.start.size());
  for (int i = 0; i < total; ++i) {
    // Outside the timed region: wait until every rank is done with the previous call
    // (peers may still read our inputs), draw fresh inputs (a cache keyed on addresses
    // or contents is useless), poison the outputs, evict L2, align the GPUs.
    device_barrier(flags_->device_peers, info_.rank, info_.world, ++epoch_, stream_);
    *last_seed = mgk::mix64(block_seed + uint64_t(i) * 0x9e3779b97f4a7c15ull);
    fill_inputs(0, *last_seed);
    poison_outputs(stream_);
    if (i == total - 1) hash_inputs_async(before_slot_);
    ck(cudaMemsetAsync(flush_, i & 0xff, flush_bytes_, stream_), "L2 flush");
    device_barrier(flags_->device_peers, info_.rank, info_.world, ++epoch_, stream_);
    ck(cudaEventRecord(events.start[i], stream_), "record");
    call();
    ck(cudaEventRecord(events.end[i], stream_), "record");
  }
}

nlohmann::json Preset::time_floor(int warmup, int iterations) {
  broker_.phase("timing floor");
  EventPairs events(warmup + iterations);
  uint64_t last_seed = 0;
  timed_loop([&] { empty_launch(info_.num_sms, kFloorThreads, stream_); }, 0, events, &last_seed);
  ck(cudaDeviceSynchronize(), "timing floor");
  auto us = events.elapsed_us(warmup);
  broker_.barrier();
  return {{"correct", true}, {"times_us", us}};
}

nlohmann::json Preset::time(Solution& who, uint64_t block_seed, int warmup, int iterations) {
  broker_.phase(who.role() + " timing");
  EventPairs events(warmup + iterations);
  uint64_t last_seed = 0;
  try {
    timed_loop([&] { who.run(inputs_[0].data(), int(inputs_[0].size()), outputs_.data(), int(outputs_.size()), stream_); },
               block_seed, events, &last_seed);
  } catch (const std::runtime_error& e) {
    throw SolutionFault(e.what());
  }
  snapshot_after(events.end.back());
  sync_solution(who.role(), "during timing");
  const std::vector<double> us = events.elapsed_us(warmup);
  broker_.barrier();

  broker_.phase(who.role() + " timing check");
  nlohmann::json result{{"times_us", us}};
  std::vector<unsigned long long> before(in_plans_.size());
  ck(cudaMemcpy(before.data(), before_slot_, sizeof(unsigned long long) * before.size(), cudaMemcpyDeviceToHost),
     "hash readback");
  auto after = hash_inputs();
  for (size_t t = 0; t < in_plans_.size(); ++t)
    if (before[t] != after[t]) {
      result["correct"] = false;
      result["failure"] = "modified its input '" + in_plans_[t].name + "' during timing on rank " +
                          std::to_string(info_.rank);
      return result;
    }
  nlohmann::json verdict = judge(0, last_seed);
  result["correct"] = verdict["correct"];
  if (!verdict["correct"].get<bool>()) {
    result["failure"] = "in the last timed iteration: " + verdict["failure"].get<std::string>();
    result["mismatch"] = verdict["mismatch"];
  }
  return result;
}

}  // namespace mgk::harness
