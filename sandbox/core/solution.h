// A reference or candidate shared object loaded with dlopen, with its context (mgk_ctx).
// Loaded in the trusted rank process (the reference; the reference evaluated against
// itself) or in the candidate process (anything a model wrote); the process supplies what
// the context's collective calls need through SolutionHost.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "mgk/abi.h"

namespace mgk::sandbox {

// An error caused by the solution (its setup/run failed, or a CUDA error surfaced while
// waiting for its work), as opposed to a failure of mgk's own code.
struct SolutionFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What ctx->sym_alloc and ctx->host_barrier do in this process. Both are collective over
// the solution's group; they throw std::runtime_error on failure.
class SolutionHost {
 public:
  virtual ~SolutionHost() = default;
  virtual mgk_sym_buffer sym_alloc(size_t bytes) = 0;
  virtual void barrier() = 0;
};

// What a solution's context holds for one size preset (see mgk_ctx).
struct SetupArgs {
  int rank = 0, world = 0, device = 0, num_sms = 0;
  void* nccl_comm = nullptr;
  std::vector<std::string> dim_names;
  std::vector<int64_t> dim_values;
  std::vector<mgk_tensor> inputs, outputs;  // descriptors: data and peers NULL
  SolutionHost* host = nullptr;
};

class Solution {
 public:
  // Loads `path`; `role` is "reference" or "candidate" (for messages). Throws SolutionFault
  // with the dlerror text, or naming the function it does not export.
  Solution(const std::string& path, const std::string& role, bool need_oracle);
  ~Solution();
  Solution(const Solution&) = delete;
  Solution& operator=(const Solution&) = delete;

  const std::string& role() const { return role_; }
  mgk_ctx& ctx() { return ctx_; }
  bool has_oracle() const { return oracle_ != nullptr; }

  // Fills ctx for a preset and calls mgk_setup. Throws SolutionFault with ctx.error.
  void setup(SetupArgs args);
  void run(const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out, cudaStream_t s);
  void oracle(const mgk_oracle_args& args, cudaStream_t s);
  void teardown();
  bool is_set_up() const { return set_up_; }

 private:
  [[noreturn]] void fail(const char* what, int rc);
  void* handle_ = nullptr;
  std::string role_;
  mgk_setup_fn setup_ = nullptr;
  mgk_run_fn run_ = nullptr;
  mgk_teardown_fn teardown_ = nullptr;
  mgk_oracle_fn oracle_ = nullptr;
  mgk_ctx ctx_{};
  SetupArgs args_;  // owns what ctx_ points to
  std::vector<const char*> dim_name_ptrs_;
  uintptr_t host_token_ = 0;  // ctx->harness: the SolutionHost's key in solution.cc's table
  bool set_up_ = false;
};

}  // namespace mgk::sandbox
