// Scaled dot-product attention on cuDNN 9's fused flash-attention engines, through the backend
// graph API (no cudnn-frontend): how references run attention at library speed. Planned once
// (in mgk_setup), run many times (in mgk_run).
//   Attention (forward): O = softmax(scale . Q K^T [+ causal mask]) V, Stats = the rows'
//   log-sum-exp (natural log, of the scaled, masked scores), fp32.
//   AttentionBackward: given Q, K, V, O, dO and Stats, with P = exp(scale . Q K^T [masked] -
//   Stats), dP = dO V^T, D = rowsum(dO * O), dS = P (dP - D):
//   dQ = scale dS K, dK = scale dS^T Q, dV = P^T dO.
// Q, K, V, O, dO, dQ, dK, dV bf16 with fp32 accumulation and softmax inside. cuDNN matches the
// fused engines from the operation graph: forward, matmul -> scale -> [causal mask] -> softmax
// with stats -> matmul; backward, the graph cudnn-frontend 1.x builds for its sdpa_backward
// node (below). The graphs below are those patterns (as cudnn-frontend 1.x lowers its sdpa
// nodes for cuDNN < 9.21). The support surface on sm90: head dim <= 128 and a multiple of 8,
// every stride but the head dim's a multiple of 8 elements, pointers 16-byte aligned. Host
// code only; link -lcudnn.
#pragma once
#include <cuda_runtime_api.h>
#include <cudnn_graph.h>

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "mgk/solution.h"

namespace mgk::dnn {

// A cuDNN handle, destroyed with its owner.
class Handle {
 public:
  Handle() = default;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (h_) cudnnDestroy(h_);
  }
  cudnnStatus_t create() { return h_ ? CUDNN_STATUS_SUCCESS : cudnnCreate(&h_); }
  operator cudnnHandle_t() const { return h_; }

 private:
  cudnnHandle_t h_ = nullptr;
};

// Where element (b, h, s, d) of a [B, H, S, D] operand lies, in elements: strides in the
// order (b, h, s, d); d's stride must be 1.
using Strides = std::array<int64_t, 4>;
// [B, S, H, D] row-major (PyTorch's and flash-attention's layout, BSHD).
inline Strides bshd(int64_t h, int64_t s, int64_t d) { return {s * h * d, d, h * d, 1}; }
// [B, H, S, D] row-major (BHSD).
inline Strides bhsd(int64_t h, int64_t s, int64_t d) { return {h * s * d, s * d, d, 1}; }

struct AttentionShape {
  int64_t b = 0, h = 0, s_q = 0, s_kv = 0, d = 0;
  Strides q{}, k{}, v{}, o{};  // K and V are [B, H, S_kv, D]
  bool causal = false;         // key j is masked out of query i's row when j > i (top left)
  float scale = 1.0f;          // multiplies Q K^T before the mask and the softmax
};

// One backend descriptor, destroyed with its owner.
class Desc {
 public:
  Desc() = default;
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  Desc(Desc&& o) noexcept : d_(std::exchange(o.d_, nullptr)) {}
  Desc& operator=(Desc&& o) noexcept {
    std::swap(d_, o.d_);
    return *this;
  }
  ~Desc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  cudnnStatus_t create(cudnnBackendDescriptorType_t t) { return cudnnBackendCreateDescriptor(t, &d_); }
  cudnnBackendDescriptor_t get() const { return d_; }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

namespace detail {

// The unique ids of the graphs' non-virtual tensors (the variant pack's keys).
enum Uid : int64_t {
  kQ = 1, kK, kV, kO, kStats, kScale, kMaskValue,  // forward (and backward)
  kDO, kDQ, kDK, kDV, kDQAccum, kOne,               // backward only
  kFirstVirtual = 100
};

// Builds an operation graph one descriptor at a time; the first failure sticks in `status`
// and every later call does nothing, so a graph reads as a straight list of operations.
class GraphBuilder {
 public:
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;

  // A tensor of 4 dims (strides in elements). By-value tensors are scalars passed as host
  // pointers in the variant pack; virtual tensors never leave the fused kernel.
  // `reorder`: a layout cuDNN keeps to itself (the backward's fp32 dQ accumulator).
  cudnnBackendDescriptor_t tensor(int64_t uid, cudnnDataType_t type, std::array<int64_t, 4> dims, Strides strides,
                                  bool is_virtual, bool by_value = false,
                                  cudnnBackendTensorReordering_t reorder = CUDNN_TENSOR_REORDERING_NONE) {
    cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const int64_t align = 16;
    set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
    set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
    set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
    if (by_value) set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
    if (reorder != CUDNN_TENSOR_REORDERING_NONE)
      set(t, CUDNN_ATTR_TENSOR_REORDERING_MODE, CUDNN_TYPE_TENSOR_REORDERING_MODE, 1, &reorder);
    finalize(t);
    return t;
  }

  // A virtual tensor, numbered from kFirstVirtual in the order they are made.
  cudnnBackendDescriptor_t virtual_tensor(cudnnDataType_t type, const std::array<int64_t, 4>& dims,
                                          const Strides& strides) {
    return tensor(next_virtual_++, type, dims, strides, true);
  }

  // y = mode(x[, b][, t]) elementwise with broadcasting, computed in `prec`; `axis` for
  // GEN_INDEX (y = the index of each element along that dim).
  void pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t prec, cudnnBackendDescriptor_t x,
                 cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t, cudnnBackendDescriptor_t y,
                 int64_t axis = -1) {
    cudnnBackendDescriptor_t pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    if (axis >= 0) set(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
    finalize(pw);
    cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw);
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    if (b) set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
    if (t) set(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t);
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    operation(op);
  }

  // c = a . b over the last two dims (batched over the first two), fp32 accumulation.
  void matmul(cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c) {
    cudnnBackendDescriptor_t mm = make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    set(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
    finalize(mm);
    cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    set(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a);
    set(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
    set(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c);
    set(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm);
    operation(op);
  }

  // y = the reduction of x over the dims where y has extent 1, in fp32.
  void reduction(cudnnReduceTensorOp_t mode, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
    cudnnBackendDescriptor_t red = make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    set(red, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode);
    set(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
    finalize(red);
    cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    set(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    set(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    set(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &red);
    operation(op);
  }

  // y = x viewed with y's dims, strides and type (the graphs' transposes: no data moves).
  void reshape(cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
    cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
    set(op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    set(op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    operation(op);
  }

  // x with the causal mask applied (row index >= column index kept, the rest the by-value
  // kMaskValue, the lowest float), x of `dims` (the scores) laid out as `strides`. The
  // indices are generated in `index_prec`: the forward's graph has fp32 there, the backward's
  // (as cudnn-frontend builds it) int32; each was checked on the H200 as it is.
  cudnnBackendDescriptor_t causal_mask(cudnnBackendDescriptor_t x, const std::array<int64_t, 4>& dims,
                                       const Strides& strides, cudnnDataType_t index_prec) {
    const std::array<int64_t, 4> one{1, 1, 1, 1};
    auto row = virtual_tensor(CUDNN_DATA_INT32, dims, strides), col = virtual_tensor(CUDNN_DATA_INT32, dims, strides);
    pointwise(CUDNN_POINTWISE_GEN_INDEX, index_prec, x, nullptr, nullptr, row, 2);
    pointwise(CUDNN_POINTWISE_GEN_INDEX, index_prec, x, nullptr, nullptr, col, 3);
    auto keep = virtual_tensor(CUDNN_DATA_BOOLEAN, dims, strides);
    pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, row, col, nullptr, keep);
    auto masked_value = tensor(kMaskValue, CUDNN_DATA_FLOAT, one, one, false, true);
    auto masked = virtual_tensor(CUDNN_DATA_FLOAT, dims, strides);
    pointwise(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, x, masked_value, keep, masked);
    return masked;
  }

  // The finalized operation graph of every operation added, on `handle`.
  Desc graph(cudnnHandle_t handle) {
    Desc g;
    if (status == CUDNN_STATUS_SUCCESS) status = g.create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set(g.get(), CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, int64_t(ops_.size()), ops_.data());
    set(g.get(), CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    finalize(g.get());
    return g;
  }

 private:
  cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type) {
    owned_.emplace_back();
    if (status == CUDNN_STATUS_SUCCESS) status = owned_.back().create(type);
    return owned_.back().get();
  }
  void set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
           int64_t count, const void* value) {
    if (status == CUDNN_STATUS_SUCCESS) status = cudnnBackendSetAttribute(d, name, type, count, value);
  }
  void finalize(cudnnBackendDescriptor_t d) {
    if (status == CUDNN_STATUS_SUCCESS) status = cudnnBackendFinalize(d);
  }
  void operation(cudnnBackendDescriptor_t op) {
    finalize(op);
    ops_.push_back(op);
  }

  std::vector<Desc> owned_;  // every descriptor made; the graph keeps its own references
  std::vector<cudnnBackendDescriptor_t> ops_;
  int64_t next_virtual_ = kFirstVirtual;
};

// A graph planned on one engine: the builder whose descriptors it refers to, the engine
// configs, the execution plan and its workspace.
class Executable {
 public:
  Executable() = default;
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;
  ~Executable() {
    if (workspace_) cudaFree(workspace_);
  }

  // Drops any previous plan and returns a fresh builder for the next graph.
  GraphBuilder& start() {
    if (workspace_) cudaFree(workspace_);
    workspace_ = nullptr;
    workspace_bytes_ = 0;
    plan_ = Desc();
    builder_ = std::make_unique<GraphBuilder>();  // its descriptors live as long as the plan
    return *builder_;
  }

  // Finalizes the builder's graph on `handle`, takes the first of the heuristic's engine
  // configs (mode A, its best first) that cuDNN can plan, and allocates that plan's
  // workspace. CUDNN_STATUS_NOT_SUPPORTED when no engine runs the graph.
  cudnnStatus_t finish(cudnnHandle_t handle) {
    graph_ = builder_->graph(handle);
    if (builder_->status != CUDNN_STATUS_SUCCESS) return builder_->status;
    Desc heur;
    cudnnStatus_t st = heur.create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    cudnnBackendDescriptor_t graph = graph_.get();
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    if (!st) st = cudnnBackendSetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    if (!st) st = cudnnBackendSetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    if (!st) st = cudnnBackendFinalize(heur.get());
    int64_t count = 0;
    if (!st) st = cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                           &count, nullptr);
    if (st) return st;
    configs_ = std::vector<Desc>(size_t(count));  // kept: the plan refers to its config
    std::vector<cudnnBackendDescriptor_t> raw;
    for (auto& c : configs_) {
      if ((st = c.create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR))) return st;
      raw.push_back(c.get());
    }
    if (count && (st = cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &count, raw.data()))) return st;
    for (int64_t i = 0; i < count; ++i) {
      Desc plan;
      if ((st = plan.create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR))) return st;
      if (cudnnBackendSetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle) ||
          cudnnBackendSetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                   1, &raw[size_t(i)]) ||
          cudnnBackendFinalize(plan.get()))
        continue;  // this engine cannot run the graph here: try the next
      int64_t got = 0, ws = 0;
      if ((st = cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                         &got, &ws))) return st;
      if (ws > 0 && cudaMalloc(&workspace_, size_t(ws)) != cudaSuccess) return CUDNN_STATUS_ALLOC_FAILED;
      workspace_bytes_ = ws;
      plan_ = std::move(plan);
      return CUDNN_STATUS_SUCCESS;
    }
    return CUDNN_STATUS_NOT_SUPPORTED;
  }

  // Runs the plan on `stream` with the `n` tensors uids[i] -> ptrs[i] (by-value scalars as
  // host pointers).
  cudnnStatus_t execute(cudnnHandle_t handle, const int64_t* uids, void* const* ptrs, int64_t n,
                        cudaStream_t stream) const {
    if (!plan_.get()) return CUDNN_STATUS_NOT_INITIALIZED;
    cudnnStatus_t st = cudnnSetStream(handle, stream);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    Desc pack;
    void* ws = workspace_;
    if ((st = pack.create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR))) return st;
    if ((st = cudnnBackendSetAttribute(pack.get(), CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids)))
      return st;
    if ((st = cudnnBackendSetAttribute(pack.get(), CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs)))
      return st;
    if ((st = cudnnBackendSetAttribute(pack.get(), CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws)))
      return st;
    if ((st = cudnnBackendFinalize(pack.get()))) return st;
    return cudnnBackendExecute(handle, plan_.get(), pack.get());
  }

  bool planned() const { return plan_.get() != nullptr; }
  int64_t workspace_bytes() const { return workspace_bytes_; }

 private:
  std::unique_ptr<GraphBuilder> builder_;
  std::vector<Desc> configs_;
  Desc graph_, plan_;
  void* workspace_ = nullptr;
  int64_t workspace_bytes_ = 0;
};

}  // namespace detail

// The forward pass, planned for one shape.
class Attention {
 public:
  // Builds the graph for `s` on `handle` and plans it (detail::Executable::finish).
  // CUDNN_STATUS_NOT_SUPPORTED when no engine runs the graph (a shape outside the fused
  // engine's support surface).
  cudnnStatus_t plan(cudnnHandle_t handle, const AttentionShape& s) {
    using namespace detail;
    shape_ = s;
    GraphBuilder& g = exe_.start();
    const cudnnDataType_t bf16 = CUDNN_DATA_BFLOAT16, f32 = CUDNN_DATA_FLOAT;
    const std::array<int64_t, 4> one{1, 1, 1, 1};
    const std::array<int64_t, 4> scores{s.b, s.h, s.s_q, s.s_kv}, rows{s.b, s.h, s.s_q, 1};
    const Strides scores_packed{s.h * s.s_q * s.s_kv, s.s_q * s.s_kv, s.s_kv, 1}, rows_packed{s.h * s.s_q, s.s_q, 1, 1};
    auto q = g.tensor(kQ, bf16, {s.b, s.h, s.s_q, s.d}, s.q, false);
    // The first matmul takes K transposed: [B, H, D, S_kv], K's strides with the last two swapped.
    auto kt = g.tensor(kK, bf16, {s.b, s.h, s.d, s.s_kv}, {s.k[0], s.k[1], s.k[3], s.k[2]}, false);
    auto v = g.tensor(kV, bf16, {s.b, s.h, s.s_kv, s.d}, s.v, false);
    auto o = g.tensor(kO, bf16, {s.b, s.h, s.s_q, s.d}, s.o, false);
    auto stats = g.tensor(kStats, f32, rows, rows_packed, false);
    auto scale = g.tensor(kScale, f32, one, one, false, true);
    auto virt = [&](cudnnDataType_t t, const std::array<int64_t, 4>& dims, const Strides& st) {
      return g.virtual_tensor(t, dims, st);
    };
    auto raw = virt(f32, scores, scores_packed);
    g.matmul(q, kt, raw);
    auto scaled = virt(f32, scores, scores_packed);
    g.pointwise(CUDNN_POINTWISE_MUL, f32, raw, scale, nullptr, scaled);
    auto logits = s.causal ? g.causal_mask(scaled, scores, scores_packed, f32) : scaled;
    // Softmax with stats: m = max, e = exp(x - m), z = sum e, stats = m + log z, p = e / z.
    auto m = virt(f32, rows, rows_packed);
    g.reduction(CUDNN_REDUCE_TENSOR_MAX, logits, m);
    auto centered = virt(f32, scores, scores_packed);
    g.pointwise(CUDNN_POINTWISE_SUB, f32, logits, m, nullptr, centered);
    auto e = virt(f32, scores, scores_packed);
    g.pointwise(CUDNN_POINTWISE_EXP, f32, centered, nullptr, nullptr, e);
    auto z = virt(f32, rows, rows_packed);
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, z);
    auto log_z = virt(f32, rows, rows_packed);
    g.pointwise(CUDNN_POINTWISE_LOG, f32, z, nullptr, nullptr, log_z);
    g.pointwise(CUDNN_POINTWISE_ADD, f32, m, log_z, nullptr, stats);
    // The probabilities enter the second matmul in the I/O type, as the fused engine requires.
    auto p = virt(bf16, scores, scores_packed);
    g.pointwise(CUDNN_POINTWISE_DIV, f32, e, z, nullptr, p);
    g.matmul(p, v, o);
    return exe_.finish(handle);
  }

  // O and Stats ([B, H, S_q] fp32, packed) from Q, K, V on `stream`.
  cudnnStatus_t run(cudnnHandle_t handle, const void* q, const void* k, const void* v, void* o, float* stats,
                    cudaStream_t stream) const {
    using namespace detail;
    float scale = shape_.scale, masked_value = std::numeric_limits<float>::lowest();
    const int64_t uids[] = {kQ, kK, kV, kO, kStats, kScale, kMaskValue};
    void* const ptrs[] = {const_cast<void*>(q), const_cast<void*>(k), const_cast<void*>(v), o, stats, &scale,
                          &masked_value};
    return exe_.execute(handle, uids, ptrs, shape_.causal ? 7 : 6, stream);
  }

  const AttentionShape& shape() const { return shape_; }
  int64_t workspace_bytes() const { return exe_.workspace_bytes(); }

 private:
  AttentionShape shape_;
  detail::Executable exe_;
};

// The backward pass, planned for one shape: dQ, dK, dV from Q, K, V, O, dO and the forward's
// Stats, with dO laid out as O, dQ as Q, dK as K and dV as V (AttentionShape's strides). The
// graph is the one cudnn-frontend 1.x's sdpa_backward node builds (no dropout, bias or
// padding), node for node:
//   softmax_sum = rowsum(dO * O) * 1
//   P  = exp(scale . Q K^T [causal: masked to the lowest float] - Stats)      fp32
//   dV = P^T dO                      (P^T through a reshape to bf16, as the engine requires)
//   dS = (dO V^T * 1 - softmax_sum) * P * scale                                 fp32
//   dK = dS^T Q                      (dS^T reshaped to bf16)
//   dQ = dS K into an fp32 accumulator cuDNN lays out itself (F16x16 reordering), which the
//        engine adds into (zeroed before every run), then copied to dQ in bf16.
// The "* 1" nodes are the frontend's dropout-scale slots; the fused engines match the graph
// with them. dQ, dK, dV come out in bf16, each rounded once from fp32 accumulation; cuDNN
// documents no fp32 gradient outputs for this pattern.
class AttentionBackward {
 public:
  AttentionBackward() = default;
  AttentionBackward(const AttentionBackward&) = delete;
  AttentionBackward& operator=(const AttentionBackward&) = delete;
  ~AttentionBackward() {
    if (dq_accum_) cudaFree(dq_accum_);
  }

  // Builds the graph for `s` on `handle`, plans it (detail::Executable::finish) and allocates
  // the dQ accumulator. CUDNN_STATUS_NOT_SUPPORTED when no engine runs the graph.
  cudnnStatus_t plan(cudnnHandle_t handle, const AttentionShape& s) {
    using namespace detail;
    shape_ = s;
    if (dq_accum_) cudaFree(dq_accum_);
    dq_accum_ = nullptr;
    dq_accum_bytes_ = size_t(s.b * s.h * s.s_q * s.d) * sizeof(float);
    if (cudaMalloc(&dq_accum_, dq_accum_bytes_) != cudaSuccess) return CUDNN_STATUS_ALLOC_FAILED;
    GraphBuilder& g = exe_.start();
    const cudnnDataType_t bf16 = CUDNN_DATA_BFLOAT16, f32 = CUDNN_DATA_FLOAT;
    const std::array<int64_t, 4> one{1, 1, 1, 1};
    const std::array<int64_t, 4> scores{s.b, s.h, s.s_q, s.s_kv}, scores_t{s.b, s.h, s.s_kv, s.s_q},
        rows{s.b, s.h, s.s_q, 1}, qdims{s.b, s.h, s.s_q, s.d}, kdims{s.b, s.h, s.s_kv, s.d};
    const Strides scores_packed{s.h * s.s_q * s.s_kv, s.s_q * s.s_kv, s.s_kv, 1},
        scores_t_view{s.h * s.s_q * s.s_kv, s.s_q * s.s_kv, 1, s.s_kv}, rows_packed{s.h * s.s_q, s.s_q, 1, 1},
        qd_packed{s.h * s.s_q * s.d, s.s_q * s.d, s.d, 1};
    auto transposed = [](const Strides& x) { return Strides{x[0], x[1], x[3], x[2]}; };
    auto q = g.tensor(kQ, bf16, qdims, s.q, false);
    // K and V enter transposed ([B, H, D, S_kv]), as the frontend hands them to the backend.
    auto kt = g.tensor(kK, bf16, {s.b, s.h, s.d, s.s_kv}, transposed(s.k), false);
    auto vt = g.tensor(kV, bf16, {s.b, s.h, s.d, s.s_kv}, transposed(s.v), false);
    auto o = g.tensor(kO, bf16, qdims, s.o, false);
    auto d_o = g.tensor(kDO, bf16, qdims, s.o, false);
    auto stats = g.tensor(kStats, f32, rows, rows_packed, false);
    auto dq = g.tensor(kDQ, bf16, qdims, s.q, false);
    auto dk = g.tensor(kDK, bf16, kdims, s.k, false);
    auto dv = g.tensor(kDV, bf16, kdims, s.v, false);
    auto dq_accum = g.tensor(kDQAccum, f32, qdims, qd_packed, false, false, CUDNN_TENSOR_REORDERING_F16x16);
    auto scale = g.tensor(kScale, f32, one, one, false, true);
    auto unit = g.tensor(kOne, f32, one, one, false, true);
    auto virt = [&](cudnnDataType_t t, const std::array<int64_t, 4>& dims, const Strides& st) {
      return g.virtual_tensor(t, dims, st);
    };
    // softmax_sum = rowsum(dO * O) * 1 (the frontend's strides for the product, kept as they are).
    auto d_o_o = virt(f32, qdims, {s.h * s.s_q * s.d, s.s_q * s.d, s.h * s.d, 1});
    g.pointwise(CUDNN_POINTWISE_MUL, f32, d_o, o, nullptr, d_o_o);
    auto row_dot = virt(f32, rows, rows_packed);
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, d_o_o, row_dot);
    auto softmax_sum = virt(f32, rows, rows_packed);
    g.pointwise(CUDNN_POINTWISE_MUL, f32, row_dot, unit, nullptr, softmax_sum);
    // P = exp(scale . Q K^T [masked] - Stats).
    auto raw = virt(f32, scores, scores_packed);
    g.matmul(q, kt, raw);
    auto logits = virt(f32, scores, scores_packed);
    g.pointwise(CUDNN_POINTWISE_MUL, f32, raw, scale, nullptr, logits);
    if (s.causal) logits = g.causal_mask(logits, scores, scores_packed, CUDNN_DATA_INT32);
    auto centered = virt(f32, scores, scores_packed);
    g.pointwise(CUDNN_POINTWISE_SUB, f32, logits, stats, nullptr, centered);
    auto p = virt(f32, scores, scores_packed);
    g.pointwise(CUDNN_POINTWISE_EXP, f32, centered, nullptr, nullptr, p);
    // dV = P^T dO.
    auto pt = virt(bf16, scores_t, scores_t_view);
    g.reshape(p, pt);
    g.matmul(pt, d_o, dv);
    // dS = (dO V^T * 1 - softmax_sum) * P * scale.
    auto dp = virt(f32, scores, scores_packed);
    g.matmul(d_o, vt, dp);
    auto dp_kept = virt(f32, scores, scores_packed);
    g.pointwise(CUDNN_POINTWISE_MUL, f32, dp, unit, nullptr, dp_kept);
    auto dp_centered = virt(f32, scores, scores_packed);
    g.pointwise(CUDNN_POINTWISE_SUB, f32, dp_kept, softmax_sum, nullptr, dp_centered);
    auto ds_unscaled = virt(f32, scores, scores_packed);
    g.pointwise(CUDNN_POINTWISE_MUL, f32, dp_centered, p, nullptr, ds_unscaled);
    auto ds = virt(f32, scores, scores_packed);
    g.pointwise(CUDNN_POINTWISE_MUL, f32, ds_unscaled, scale, nullptr, ds);
    // dK = dS^T Q.
    auto dst = virt(bf16, scores_t, scores_t_view);
    g.reshape(ds, dst);
    g.matmul(dst, q, dk);
    // dQ = dS K: K^T viewed back as K (the frontend leaves this view in the intermediate type,
    // fp32), into the fp32 accumulator, then dQ = identity(accumulator) in bf16.
    auto k_view = virt(f32, kdims, s.k);
    g.reshape(kt, k_view);
    g.matmul(ds, k_view, dq_accum);
    g.pointwise(CUDNN_POINTWISE_IDENTITY, f32, dq_accum, nullptr, nullptr, dq);
    return exe_.finish(handle);
  }

  // dQ, dK, dV from Q, K, V, O, dO and Stats ([B, H, S_q] fp32, packed) on `stream`.
  cudnnStatus_t run(cudnnHandle_t handle, const void* q, const void* k, const void* v, const void* o,
                    const void* d_o, const float* stats, void* dq, void* dk, void* dv, cudaStream_t stream) const {
    using namespace detail;
    if (!exe_.planned()) return CUDNN_STATUS_NOT_INITIALIZED;
    if (cudaMemsetAsync(dq_accum_, 0, dq_accum_bytes_, stream) != cudaSuccess) return CUDNN_STATUS_EXECUTION_FAILED;
    float scale = shape_.scale, unit = 1.0f, masked_value = std::numeric_limits<float>::lowest();
    const int64_t uids[] = {kQ, kK, kV, kO, kDO, kStats, kDQ, kDK, kDV, kDQAccum, kScale, kOne, kMaskValue};
    void* const ptrs[] = {const_cast<void*>(q), const_cast<void*>(k), const_cast<void*>(v), const_cast<void*>(o),
                          const_cast<void*>(d_o), const_cast<float*>(stats), dq, dk, dv, dq_accum_, &scale, &unit,
                          &masked_value};
    return exe_.execute(handle, uids, ptrs, shape_.causal ? 13 : 12, stream);
  }

  const AttentionShape& shape() const { return shape_; }
  int64_t workspace_bytes() const { return exe_.workspace_bytes() + int64_t(dq_accum_bytes_); }

 private:
  AttentionShape shape_;
  detail::Executable exe_;
  void* dq_accum_ = nullptr;  // [B, H, S_q, D] fp32 in cuDNN's F16x16 order
  size_t dq_accum_bytes_ = 0;
};

// "status: the last error cuDNN recorded", for messages.
inline void describe(cudnnStatus_t st, char* out, size_t n) {
  char detail[512] = "";
  cudnnGetLastErrorString(detail, sizeof(detail));
  snprintf(out, n, "%s%s%s", cudnnGetErrorString(st), detail[0] ? ": " : "", detail);
}

}  // namespace mgk::dnn

// Return from the enclosing solution function with the cuDNN status (and cuDNN's last error
// message) as ctx->error.
#define MGK_CUDNN_TRY(ctx, expr)                                                     \
  do {                                                                                \
    cudnnStatus_t mgk_dnn_ = (expr);                                                  \
    if (mgk_dnn_ != CUDNN_STATUS_SUCCESS) {                                           \
      char mgk_dnn_msg_[640];                                                         \
      mgk::dnn::describe(mgk_dnn_, mgk_dnn_msg_, sizeof(mgk_dnn_msg_));               \
      return mgk::set_error((ctx), "%s:%d: %s: %s", __FILE__, __LINE__, #expr, mgk_dnn_msg_); \
    }                                                                                 \
  } while (0)
