// What of a built candidate library can run as host code, judged on the library as the
// loader maps it: every executable segment, not the .text section alone. Refused:
//   - an executable segment holding anything but the compiler's code sections (.init, .plt,
//     .plt.got, .plt.sec, .text, .fini), or bytes between them that are not padding;
//   - an executable stack, or text relocations (code the loader would make writable);
//   - a system-call instruction (syscall, sysenter, int 0x80) among the decoded
//     instructions of any of those sections.
// These are the early, named refusals. They cannot see everything that can run: the bytes
// of a `syscall` hidden inside another instruction (reached by a jump into its middle),
// libc's own code found in memory. Those bytes occur by chance inside ordinary
// instructions too (an immediate, a displacement: the all-reduce expert has one), so no
// static check refuses them; the candidate process's system-call filter
// (sandbox/candidate/syscall_filter.h) is what holds against them.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

namespace mgk::eval {

class ElfImage;

// One line naming the first problem, or nullopt. Runs objdump (binutils) to decode the
// code; throws mgk::Error when it is missing or fails.
std::optional<std::string> executable_code_violation(const ElfImage& library);

}  // namespace mgk::eval
