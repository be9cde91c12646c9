// A reference or candidate shared object loaded with dlopen, with its context (mgk_ctx).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "mgk/abi.h"
#include "symmetric.h"

namespace mgk::harness {

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
  void setup(int rank, int world, int device, int num_sms, void* nccl_comm,
             const std::vector<std::string>& dim_names, const std::vector<int64_t>& dim_values,
             SymmetricHeap* heap, BrokerClient* broker);
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
  std::vector<std::string> dim_names_;
  std::vector<const char*> dim_name_ptrs_;
  std::vector<int64_t> dim_values_;
  bool set_up_ = false;
};

}  // namespace mgk::harness
