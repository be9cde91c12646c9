// A stand-in for mgk-candidate: answers its harness's commands and aborts on the first
// call, as a candidate whose code crashes its process would.
#include <cstdlib>
#include <cstring>

#include "wire/protocol.h"

namespace wire = mgk::wire;

int main(int argc, char** argv) {
  int fd = -1;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--fd") == 0) fd = std::atoi(argv[i + 1]);
  if (fd < 0) return 64;
  wire::Channel harness(fd);
  try {
    for (;;) {
      wire::Frame f = wire::receive(harness);
      const auto* c = std::get_if<wire::cand::Command>(&f.body);
      if (!c) return 3;
      if (std::holds_alternative<wire::cand::Call>(*c)) std::abort();
      wire::send(harness, wire::Reply{});
      if (std::holds_alternative<wire::cand::Exit>(*c)) return 0;
    }
  } catch (const wire::ClosedError&) {
    return 0;
  }
}
