#include "preset.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "input_gen.h"
#include "mgk/dtype_table.h"
#include "mgk/gen.cuh"

namespace mgk::harness {

using sandbox::SolutionFault;
using wire::Who;

namespace {

void ck(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw std::runtime_error(what + ": " + cudaGetErrorString(e));
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

size_t tensor_bytes(const wire::TensorPlan& p) { return size_t(p.numel) * dtype_size(p.dtype); }

mgk_tensor to_tensor(const wire::TensorPlan& p, const SharedBuffer* b) {
  mgk_tensor t{};
  t.name = p.name.c_str();
  t.dtype = p.dtype;
  t.ndim = int(p.shape.size());
  for (int d = 0; d < t.ndim; ++d) t.shape[d] = p.shape[d];
  t.numel = p.numel;
  if (b) {
    t.data = b->mapping.local();
    if (b->symmetric) {
      t.peers = b->mapping.device_peers();
      t.host_peers = b->mapping.host_peers().data();
    }
  }
  return t;
}

// ctx->sym_alloc and ctx->host_barrier for a solution running in this process: the whole
// group of trusted ranks takes part.
class GroupHost : public sandbox::SolutionHost {
 public:
  GroupHost(BufferPool& pool, BrokerClient& broker) : pool_(pool), broker_(broker) {}
  mgk_sym_buffer sym_alloc(size_t bytes) override {
    const SharedBuffer& b = pool_.symmetric(bytes);
    return {b.mapping.local(), b.mapping.device_peers(), b.mapping.host_peers().data(), bytes};
  }
  void barrier() override { broker_.barrier(); }

 private:
  BufferPool& pool_;
  BrokerClient& broker_;
};

}  // namespace

Preset::Preset(const wire::PresetPlan& plan, const RankInfo& info, BufferPool& pool, BrokerClient& broker,
               sandbox::Solution& reference, CandidateSlot candidate)
    : info_(info), broker_(broker), reference_(reference), candidate_(candidate) {
  in_plans_ = plan.inputs;
  out_plans_ = plan.outputs;
  dims_ = plan.dims;
  ck(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream");
  // Every tensor a solution sees lives in memory other processes can map; what decides the
  // verdict (the oracle's results, the scales, the hash slot) is this process's alone.
  auto make = [&](const wire::TensorPlan& p) -> const SharedBuffer* {
    size_t bytes = std::max<size_t>(p.alloc_bytes, 16);
    return p.symmetric ? &pool.symmetric(bytes) : &pool.private_buffer(bytes);
  };
  input_buffers_.resize(kInputSets);
  inputs_.resize(kInputSets);
  for (int s = 0; s < kInputSets; ++s)
    for (const auto& p : in_plans_) {
      input_buffers_[s].push_back(make(p));
      inputs_[s].push_back(to_tensor(p, input_buffers_[s].back()));
    }
  updated_.assign(in_plans_.size(), false);
  outputs_.resize(kInputSets);
  output_io_.resize(kInputSets);
  for (const auto& p : out_plans_) {
    if (p.in_place_of >= int(in_plans_.size())) throw std::runtime_error("output '" + p.name + "' in place of no input");
    const bool in_place = p.in_place_of >= 0;
    if (in_place) updated_[p.in_place_of] = true;
    output_buffers_.push_back(in_place ? nullptr : make(p));
    snapshot_buffers_.push_back(&pool.private_buffer(std::max<size_t>(tensor_bytes(p), 16)));
    for (int s = 0; s < kInputSets; ++s) {
      outputs_[s].push_back(to_tensor(p, in_place ? input_buffers_[s][p.in_place_of] : output_buffers_.back()));
      output_io_[s].push_back({outputs_[s].back().data, snapshot_buffers_.back()->mapping.local(), tensor_bytes(p)});
    }
    size_t n = size_t(std::max<int64_t>(p.numel, 1));
    void* exp = nullptr;
    float* scale = nullptr;
    ck(cudaMalloc(&exp, n * 8), "oracle buffer");
    owned_.push_back(exp);
    if (p.check.kind == CheckKind::kRounding) {
      ck(cudaMalloc(&scale, n * sizeof(float)), "oracle scale buffer");
      owned_.push_back(scale);
    }
    expected_.push_back(exp);
    scales_.push_back(scale);
  }
  if (outside_clock()) {
    copier_ = std::make_unique<TrustedCopier>();
    trusted_io_.resize(kInputSets);
    for (const auto& p : out_plans_) {
      void* t = nullptr;
      ck(cudaMalloc(&t, std::max<size_t>(tensor_bytes(p), 16)), "the outputs' trusted copy");
      owned_.push_back(t);
      trusted_.push_back(t);
    }
    for (int s = 0; s < kInputSets; ++s)
      for (size_t o = 0; o < out_plans_.size(); ++o)
        trusted_io_[s].push_back({outputs_[s][o].data, trusted_[o], tensor_bytes(out_plans_[o])});
  }
  reference_flags_ = &pool.symmetric(sizeof(uint64_t) * info_.world);
  if (candidate_.remote) candidate_flags_ = &pool.symmetric(sizeof(uint64_t) * info_.world);
  site_ = std::make_unique<sandbox::CallSite>(info_.rank, info_.world, reference_flags_->mapping.device_peers(),
                                              info_.l2_bytes);
  ck(cudaMalloc(&hash_slot_, sizeof(unsigned long long)), "hash slot");
  owned_.push_back(hash_slot_);

  GroupHost host(pool, broker_);
  sandbox::SetupArgs args = setup_args();
  args.nccl_comm = info_.comm;
  args.host = &host;
  try {
    reference_.setup(args);
  } catch (const SolutionFault& e) {
    throw std::runtime_error(std::string(e.what()) + " (the reference: a bug in mgk's suite)");
  }
  if (candidate_.local) {
    args.nccl_comm = candidate_.gets_comm ? info_.comm : nullptr;
    candidate_.local->setup(args);
  } else if (candidate_.remote) {
    CandidateLink& c = *candidate_.remote;
    wire::cand::Setup s;
    s.rank = info_.rank;
    s.world = info_.world;
    s.num_sms = info_.num_sms;
    s.dims = dims_;
    s.input_sets.resize(kInputSets);
    for (int set = 0; set < kInputSets; ++set)
      for (size_t t = 0; t < in_plans_.size(); ++t) s.input_sets[set].push_back({in_plans_[t], c.share(*input_buffers_[set][t])});
    // An in-place output names its input's buffer of set 0; the candidate process takes
    // each set's own from the plan's in_place_of.
    for (size_t o = 0; o < out_plans_.size(); ++o) {
      const int j = out_plans_[o].in_place_of;
      s.outputs.push_back({out_plans_[o], c.share(j >= 0 ? *input_buffers_[0][j] : *output_buffers_[o])});
      s.snapshots.push_back(c.share(*snapshot_buffers_[o]));
    }
    s.flags = c.share(*candidate_flags_);
    c.setup(s);
  }
  candidate_set_up_ = candidate_.present();
  ck(cudaDeviceSynchronize(), "after setup");
}

Preset::~Preset() {
  cudaDeviceSynchronize();
  if (candidate_set_up_) {
    try {
      if (candidate_.local) candidate_.local->teardown();
      if (candidate_.remote) candidate_.remote->teardown();
    } catch (const std::exception&) {
      // The candidate's teardown failing changes no verdict; the group is torn down anyway.
    }
  }
  reference_.teardown();
  site_.reset();
  for (void* p : owned_) cudaFree(p);
  cudaStreamDestroy(stream_);
}

sandbox::SetupArgs Preset::setup_args() const {
  sandbox::SetupArgs a;
  a.rank = info_.rank;
  a.world = info_.world;
  a.device = info_.device;
  a.num_sms = info_.num_sms;
  for (const auto& d : dims_) {
    a.dim_names.push_back(d.name);
    a.dim_values.push_back(d.value);
  }
  for (const auto& p : in_plans_) a.inputs.push_back(to_tensor(p, nullptr));
  for (const auto& p : out_plans_) a.outputs.push_back(to_tensor(p, nullptr));
  return a;
}

std::vector<mgk_input_gen> Preset::gens_for(uint64_t seed) const {
  std::vector<mgk_input_gen> g;
  for (size_t t = 0; t < in_plans_.size(); ++t) {
    const auto& p = in_plans_[t];
    g.push_back(sandbox::input_gen(p.init, p.dtype, mgk::mix64(seed + 0x51ed270b2c1fa3ull * (t + 1))));
  }
  return g;
}

void Preset::stage(int set, uint64_t seed, bool poison) {
  auto gens = gens_for(seed);
  for (size_t t = 0; t < in_plans_.size(); ++t)
    fill_input(gens[t], info_.rank, inputs_[set][t].data, in_plans_[t].numel, stream_);
  // 0xFF bytes are NaN in every float dtype (fp8 included) and -1 in every integer dtype.
  // An in-place output holds its input's fresh values instead: a call that leaves it alone
  // is judged on those.
  if (poison)
    for (size_t o = 0; o < out_plans_.size(); ++o)
      if (out_plans_[o].in_place_of < 0)
        ck(cudaMemsetAsync(outputs_[set][o].data, 0xFF, tensor_bytes(out_plans_[o]), stream_), "poison outputs");
  ck(cudaStreamSynchronize(stream_), "stage inputs");
}

std::vector<unsigned long long> Preset::hash_inputs(int set) {
  std::vector<unsigned long long> h;
  for (size_t t = 0; t < in_plans_.size(); ++t) {
    hash_bytes(inputs_[set][t].data, tensor_bytes(in_plans_[t]), hash_slot_, stream_);
    unsigned long long v = 0;
    ck(cudaMemcpyAsync(&v, hash_slot_, sizeof(v), cudaMemcpyDeviceToHost, stream_), "hash readback");
    ck(cudaStreamSynchronize(stream_), "hash sync");
    h.push_back(v);
  }
  return h;
}

double Preset::call(Who who, int set, bool aligned) {
  trusted_taken_ = false;
  const auto& in = inputs_[set];
  auto& out = outputs_[set];
  auto local = [&](sandbox::Solution& s, const char* role) {
    return site_->call([&](cudaStream_t st) { s.run(in.data(), int(in.size()), out.data(), int(out.size()), st); },
                       output_io_[set], aligned, role);
  };
  if (who == Who::kReference) return local(reference_, "reference");
  if (candidate_.local) return local(*candidate_.local, "candidate");
  if (!candidate_.remote) throw std::runtime_error("no candidate loaded");
  if (!outside_clock()) return candidate_.remote->call(set, aligned);
  const double t0 = monotonic_us();
  const double us = candidate_.remote->call(set, aligned);
  // Every rank's candidate has answered: no peer still writes here. (Not between calls made
  // back to back, which must stay free of barriers.)
  if (info_.world > 1 && aligned) broker_.barrier();
  const double copy_us = copier_->copy(trusted_io_[set]);
  trusted_taken_ = true;
  last_outside_us_ = monotonic_us() - t0 - candidate_.remote->overhead().median_us - 2 * copy_us;
  return us;
}

std::optional<wire::Mismatch> Preset::compare(const std::vector<void*>& got, double* worst_ratio) {
  for (size_t o = 0; o < out_plans_.size(); ++o) {
    const auto& p = out_plans_[o];
    CheckOutcome c = check_output(got[o], p.dtype, p.numel, expected_[o], scales_[o], p.check, stream_);
    if (worst_ratio) *worst_ratio = std::max(*worst_ratio, c.worst_ratio);
    if (c.failures == 0) continue;
    wire::Mismatch m;
    m.output = p.name;
    m.rank = info_.rank;
    m.index = shape_index(p.shape, c.first_index);
    m.flat_index = c.first_index;
    if (!c.got_nan) m.got = c.got;
    m.expected = c.expected;
    m.bound = c.bound;
    m.failures = c.failures;
    m.numel = p.numel;
    return m;
  }
  return std::nullopt;
}

wire::Verdict Preset::judge(int set, uint64_t seed, const std::vector<unsigned long long>* before) {
  if (before) {
    auto after = hash_inputs(set);
    for (size_t t = 0; t < in_plans_.size(); ++t)
      if (!updated_[t] && (*before)[t] != after[t])
        return {false, wire::FailureKind::kModifiedInput,
                "modified its input '" + in_plans_[t].name + "' on rank " + std::to_string(info_.rank) +
                    " (inputs must stay unchanged)",
                std::nullopt};
  }
  // The oracle runs after the call has finished, here, and its results are wiped right
  // after the comparison: the candidate's process never maps this memory.
  // The oracle regenerates inputs from `gens`; an input updated in place holds the call's
  // result by now, so the oracle is not even shown its buffer.
  auto gens = gens_for(seed);
  std::vector<mgk_tensor> out_shapes = outputs_[set];
  for (auto& t : out_shapes) t.data = nullptr, t.peers = nullptr, t.host_peers = nullptr;
  std::vector<mgk_tensor> in_views = inputs_[set];
  for (size_t t = 0; t < in_views.size(); ++t)
    if (updated_[t]) in_views[t].data = nullptr, in_views[t].peers = nullptr, in_views[t].host_peers = nullptr;
  mgk_oracle_args args{};
  args.inputs = in_views.data();
  args.n_in = int(in_views.size());
  args.gens = gens.data();
  args.outputs = out_shapes.data();
  args.n_out = int(out_shapes.size());
  args.expected = expected_.data();
  args.scale = scales_.data();
  try {
    reference_.oracle(args, stream_);
  } catch (const SolutionFault& e) {
    throw std::runtime_error(std::string(e.what()) + " (the oracle: a bug in mgk's suite)");
  }
  ck(cudaStreamSynchronize(stream_), "oracle");
  // All must hold: the outputs as the call ended (under the outside clock, the harness's
  // own copy taken when the candidate's process answered, which nothing of the candidate's
  // can write), as the stream finished (the snapshot: work left running on another stream,
  // or a peer still writing, shows there) and as they are now (work that went on after the
  // call could still have changed them).
  wire::Verdict v;
  std::vector<void*> snapshots, live, trusted;
  for (auto* b : snapshot_buffers_) snapshots.push_back(b->mapping.local());
  for (auto& t : outputs_[set]) live.push_back(t.data);
  if (trusted_taken_)
    for (auto& t : trusted_io_[set]) trusted.push_back(t.snapshot);
  double worst_ratio = 0;
  auto at_answer = trusted.empty() ? std::nullopt : compare(trusted);
  auto final_state = compare(live, &worst_ratio);
  auto snap = compare(snapshots);
  if (at_answer || (trusted.empty() && final_state)) {
    v = {false, wire::FailureKind::kMismatch, "output mismatch", at_answer ? at_answer : final_state};
  } else if (snap) {
    v = {false, wire::FailureKind::kIncomplete,
         "outputs were incomplete when the work enqueued on the timed stream finished: "
         "work on another stream (or a peer still writing) was not joined back before returning",
         snap};
  } else if (final_state) {
    v = {false, wire::FailureKind::kIncomplete,
         "outputs changed after the candidate's process said the call was done: work was still running "
         "after mgk_run's stream finished",
         final_state};
  }
  v.worst_ratio = worst_ratio;
  for (size_t o = 0; o < out_plans_.size(); ++o) {
    size_t n = size_t(std::max<int64_t>(out_plans_[o].numel, 1));
    ck(cudaMemsetAsync(expected_[o], 0, n * 8, stream_), "wipe oracle");
    if (scales_[o]) ck(cudaMemsetAsync(scales_[o], 0, n * 4, stream_), "wipe scale");
  }
  ck(cudaStreamSynchronize(stream_), "wipe oracle sync");
  return v;
}

wire::Verdict Preset::trial(Who who, uint64_t seed) {
  stage(0, seed, true);
  auto before = hash_inputs(0);
  broker_.phase(std::string(wire::to_string(who)) + " run");
  call(who, 0, true);
  broker_.phase(std::string(wire::to_string(who)) + " check");
  return judge(0, seed, &before);
}

wire::Verdict Preset::back_to_back(Who who, uint64_t seed, int calls) {
  broker_.phase(std::string(wire::to_string(who)) + " back-to-back calls");
  broker_.barrier();  // everyone is done with earlier work; from here on, no barrier
  wire::Verdict first;
  double worst_ratio = 0;
  for (int i = 0; i < calls; ++i) {
    const uint64_t call_seed = mgk::mix64(seed + uint64_t(i) * 0x9e3779b97f4a7c15ull);
    const int set = i % kInputSets;
    stage(set, call_seed, false);
    call(who, set, false);
    wire::Verdict v = judge(set, call_seed, nullptr);
    worst_ratio = std::max(worst_ratio, v.worst_ratio);
    if (first.correct && !v.correct) {
      first = v;
      first.failure = "call " + std::to_string(i + 1) + " of " + std::to_string(calls) +
                      " made back to back (no barrier between calls): " + v.failure;
    }
  }
  broker_.barrier();
  first.worst_ratio = worst_ratio;
  return first;
}

wire::TimedCalls Preset::time(Who who, uint64_t block_seed, int warmup, int iterations, const std::vector<int>& checked) {
  broker_.phase(std::string(wire::to_string(who)) + " timing");
  const std::set<int> check(checked.begin(), checked.end());
  const int total = warmup + iterations;
  wire::TimedCalls block;
  for (int i = 0; i < total; ++i) {
    const uint64_t seed = mgk::mix64(block_seed + uint64_t(i) * 0x9e3779b97f4a7c15ull);
    stage(0, seed, true);
    const bool judged = check.count(i) > 0;
    std::vector<unsigned long long> before;
    if (judged) before = hash_inputs(0);
    const double us = call(who, 0, true);
    if (i >= warmup) {
      block.times_us.push_back(us);
      if (who == Who::kCandidate && outside_clock()) block.outside_us.push_back(last_outside_us_);
    }
    if (!judged) continue;
    ++block.checked;
    wire::Verdict v = judge(0, seed, &before);
    const double worst_ratio = std::max(block.verdict.worst_ratio, v.worst_ratio);
    if (block.verdict.correct && !v.correct) {
      block.verdict = v;
      block.verdict.failure =
          "in timed call " + std::to_string(i + 1) + " of " + std::to_string(total) + ": " + v.failure;
    }
    block.verdict.worst_ratio = worst_ratio;
  }
  return block;
}

std::vector<double> Preset::time_floor(int warmup, int iterations) {
  broker_.phase("timing floor");
  std::vector<double> us;
  for (int i = 0; i < warmup + iterations; ++i) {
    stage(0, mgk::mix64(uint64_t(i) + 1), true);
    double t = site_->call([&](cudaStream_t s) { sandbox::empty_launch(info_.num_sms, kFloorThreads, s); }, {}, true,
                           "timing floor");
    if (i >= warmup) us.push_back(t);
  }
  return us;
}

}  // namespace mgk::harness
