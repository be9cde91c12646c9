#include "solution.h"

#include <dlfcn.h>

#include <cstring>
#include <map>
#include <mutex>
#include <random>

namespace mgk::sandbox {

namespace {
// ctx->harness is an opaque token, not a pointer: nothing a solution is handed leads into
// this process's own objects (the call protocol's events among them). The token is looked
// up here. (Code in the same process can still search its memory; the time a candidate's
// process reports is never trusted alone: harness/outside_clock.h.)
std::mutex g_hosts_mutex;
std::map<uintptr_t, SolutionHost*> g_hosts;

uintptr_t register_host(SolutionHost* host) {
  static std::mt19937_64 draw{std::random_device{}()};
  std::lock_guard<std::mutex> lock(g_hosts_mutex);
  uintptr_t token = 0;
  while (token == 0 || g_hosts.count(token)) token = uintptr_t(draw()) | 1;  // odd: never a valid object address
  g_hosts[token] = host;
  return token;
}

void unregister_host(uintptr_t token) {
  std::lock_guard<std::mutex> lock(g_hosts_mutex);
  g_hosts.erase(token);
}

SolutionHost* host_of(mgk_ctx* ctx) {
  std::lock_guard<std::mutex> lock(g_hosts_mutex);
  auto it = g_hosts.find(reinterpret_cast<uintptr_t>(ctx->harness));
  if (it == g_hosts.end()) throw std::runtime_error("the context's harness handle was changed");
  return it->second;
}

int sym_alloc_thunk(mgk_ctx* ctx, size_t bytes, mgk_sym_buffer* out) {
  try {
    *out = host_of(ctx)->sym_alloc(bytes);
    return 0;
  } catch (const std::exception& e) {
    snprintf(ctx->error, MGK_ERROR_CAPACITY, "sym_alloc(%zu): %s", bytes, e.what());
    return 1;
  }
}

int host_barrier_thunk(mgk_ctx* ctx) {
  try {
    host_of(ctx)->barrier();
    return 0;
  } catch (const std::exception& e) {
    snprintf(ctx->error, MGK_ERROR_CAPACITY, "host_barrier: %s", e.what());
    return 1;
  }
}
}  // namespace

Solution::Solution(const std::string& path, const std::string& role, bool need_oracle) : role_(role) {
  // RTLD_LOCAL keeps a solution's symbols to itself; RTLD_NOW surfaces link errors here.
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw SolutionFault("cannot load the " + role + " " + path + ": " + dlerror());
  auto sym = [&](const char* name, bool required) -> void* {
    void* p = dlsym(handle_, name);
    if (!p && required)
      throw SolutionFault("the " + role + " does not export '" + name + "' (declare it as MGK_EXPORT, extern \"C\")");
    return p;
  };
  setup_ = reinterpret_cast<mgk_setup_fn>(sym("mgk_setup", true));
  run_ = reinterpret_cast<mgk_run_fn>(sym("mgk_run", true));
  teardown_ = reinterpret_cast<mgk_teardown_fn>(sym("mgk_teardown", true));
  oracle_ = reinterpret_cast<mgk_oracle_fn>(sym("mgk_oracle", need_oracle));
}

// Not dlclose'd: a solution may leave CUDA objects (streams, modules) behind that the
// runtime still refers to at exit.
Solution::~Solution() {
  if (host_token_) unregister_host(host_token_);
}

void Solution::fail(const char* what, int rc) {
  std::string msg = ctx_.error[0] ? ctx_.error : "(no message in ctx->error)";
  throw SolutionFault("the " + role_ + "'s " + what + " returned " + std::to_string(rc) + ": " + msg);
}

void Solution::setup(SetupArgs args) {
  args_ = std::move(args);
  ctx_ = mgk_ctx{};
  ctx_.abi_version = MGK_ABI_VERSION;
  ctx_.rank = args_.rank;
  ctx_.world_size = args_.world;
  ctx_.device = args_.device;
  ctx_.num_sms = args_.num_sms;
  ctx_.nccl_comm = args_.nccl_comm;
  dim_name_ptrs_.clear();
  for (const auto& n : args_.dim_names) dim_name_ptrs_.push_back(n.c_str());
  ctx_.num_dims = int(args_.dim_names.size());
  ctx_.dim_names = dim_name_ptrs_.data();
  ctx_.dim_values = args_.dim_values.data();
  ctx_.num_inputs = int(args_.inputs.size());
  ctx_.inputs = args_.inputs.data();
  ctx_.num_outputs = int(args_.outputs.size());
  ctx_.outputs = args_.outputs.data();
  ctx_.sym_alloc = sym_alloc_thunk;
  ctx_.host_barrier = host_barrier_thunk;
  if (host_token_) unregister_host(host_token_);
  host_token_ = args_.host ? register_host(args_.host) : 0;
  ctx_.harness = reinterpret_cast<void*>(host_token_);
  int rc = setup_(&ctx_);
  if (rc != 0) fail("mgk_setup", rc);
  set_up_ = true;
}

void Solution::run(const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out, cudaStream_t s) {
  ctx_.error[0] = '\0';
  int rc = run_(&ctx_, in, n_in, out, n_out, s);
  if (rc != 0) fail("mgk_run", rc);
}

void Solution::oracle(const mgk_oracle_args& args, cudaStream_t s) {
  ctx_.error[0] = '\0';
  int rc = oracle_(&ctx_, &args, s);
  if (rc != 0) fail("mgk_oracle", rc);
}

void Solution::teardown() {
  if (!set_up_) return;
  teardown_(&ctx_);
  set_up_ = false;
  if (host_token_) unregister_host(host_token_), host_token_ = 0;
}

}  // namespace mgk::sandbox
