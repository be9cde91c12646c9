// Flaw: a correct all-reduce that opens a socket in its setup (to send its inputs, or the
// machine's secrets, somewhere). Refused: the built library imports socket(); and were it
// run, its process has no network (tests/sandboxing/candidate_sandbox_test.cc).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../gpu/candidates/simple_common.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(443);
  addr.sin_addr.s_addr = htonl(0x08080808);
  if (fd >= 0) connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  return simple::setup(ctx);
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { simple::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  return 0;
}
