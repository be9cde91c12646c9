#include "in_process_group.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace mgk::bench {
namespace {

InProcessGroup* group_of(mgk_ctx* ctx) { return static_cast<InProcessGroup*>(ctx->harness); }

int sym_alloc_thunk(mgk_ctx* ctx, size_t bytes, mgk_sym_buffer* out) {
  std::string error;
  if (group_of(ctx)->sym_alloc(ctx->rank, bytes, out, &error) == 0) return 0;
  std::snprintf(ctx->error, MGK_ERROR_CAPACITY, "sym_alloc(%zu): %s", bytes, error.c_str());
  return 1;
}

int host_barrier_thunk(mgk_ctx* ctx) {
  group_of(ctx)->barrier();
  return 0;
}

}  // namespace

InProcessGroup::InProcessGroup(int world) : world_(world), barrier_(world), next_index_(world, 0) {}

InProcessGroup::~InProcessGroup() { release_all(); }

mgk_ctx InProcessGroup::make_ctx(int rank, const std::vector<const char*>& dim_names,
                                 const std::vector<int64_t>& dim_values) {
  mgk_ctx ctx{};
  ctx.abi_version = MGK_ABI_VERSION;
  ctx.rank = rank;
  ctx.world_size = world_;
  ctx.device = rank;
  cudaDeviceGetAttribute(&ctx.num_sms, cudaDevAttrMultiProcessorCount, rank);
  ctx.num_dims = int(dim_names.size());
  ctx.dim_names = dim_names.data();
  ctx.dim_values = dim_values.data();
  ctx.sym_alloc = sym_alloc_thunk;
  ctx.host_barrier = host_barrier_thunk;
  ctx.harness = this;
  return ctx;
}

int InProcessGroup::sym_alloc(int rank, size_t bytes, mgk_sym_buffer* out, std::string* error) {
  size_t index;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    index = next_index_[rank]++;
    if (allocations_.size() <= index) allocations_.resize(index + 1, Allocation{std::vector<void*>(world_), {}});
  }
  void* mine = nullptr;
  cudaError_t e = cudaMalloc(&mine, bytes ? bytes : 16);
  if (e == cudaSuccess) e = cudaMemset(mine, 0, bytes ? bytes : 16);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    allocations_[index].host_peers[rank] = mine;
  }
  barrier();  // every rank's pointer is in the table
  void** table = nullptr;
  if (e == cudaSuccess) e = cudaMalloc(reinterpret_cast<void**>(&table), sizeof(void*) * world_);
  std::vector<void*> host_peers;
  void* const* stable_host_peers;  // the vector's buffer survives moves of allocations_
  {
    std::lock_guard<std::mutex> lock(mutex_);
    host_peers = allocations_[index].host_peers;
    stable_host_peers = allocations_[index].host_peers.data();
    allocations_[index].device_tables.push_back(table);
  }
  if (e == cudaSuccess) e = cudaMemcpy(table, host_peers.data(), sizeof(void*) * world_, cudaMemcpyHostToDevice);
  barrier();  // no rank uses the allocation before every rank has it
  if (e != cudaSuccess) {
    *error = cudaGetErrorString(e);
    return 1;
  }
  out->local = mine;
  out->peers = table;
  out->host_peers = stable_host_peers;
  out->bytes = bytes;
  return 0;
}

void InProcessGroup::release_all() {
  for (auto& a : allocations_) {
    for (void* p : a.host_peers)
      if (p) cudaFree(p);
    for (void** t : a.device_tables)
      if (t) cudaFree(t);
  }
  allocations_.clear();
  std::fill(next_index_.begin(), next_index_.end(), 0);
}

}  // namespace mgk::bench
