// A reference or candidate shared object loaded with dlopen, with its context (mgk_ctx).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "mgk/abi.h"
#include "symmetric.h"

namespace mgk::harness {

// What a solution's context holds for one size preset (see mgk_ctx).
struct SetupArgs {
  int rank = 0, world = 0, device = 0, num_sms = 0;
  void* nccl_comm = nullptr;
  std::vector<std::string> dim_names;
  std::vector<int64_t> dim_values;
  std::vector<mgk_tensor> inputs, outputs;  // descriptors: data and peers NULL
  SymmetricHeap* heap = nullptr;
  BrokerClient* broker = nullptr;
};

class Solution {
 public:
  // Loads `path`; `role` is "reference" or "candidate" (for messages). Throws with the
  // dlerror text and the missing symbol named.
  Solution(const std::string& path, const std::string& role, bool need_oracle);
  ~Solution();
  Solution(const Solution&) = delete;
  Solution& operator=(const Solution&) = delete;

  const std::string& role() const { return role_; }
  mgk_ctx& ctx() { return ctx_; }
  bool has_oracle() const { return oracle_ != nullptr; }

  // Fills ctx for a preset and calls mgk_setup. Throws with ctx.error on failure.
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
  bool set_up_ = false;
};

}  // namespace mgk::harness
