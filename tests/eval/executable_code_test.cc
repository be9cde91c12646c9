// What of a built library can run as host code (src/eval/executable_code.h), on small
// libraries built here with the host compiler: plain code passes; a section of its own that
// is executable, a system-call instruction anywhere in the code, an executable stack, are
// each refused with their reason.
#include "eval/executable_code.h"

#include <gtest/gtest.h>

#include <fstream>

#include "eval/elf.h"
#include "process/run.h"
#include "support/test_paths.h"

namespace mgk::eval {
namespace {

namespace fs = std::filesystem;

// The first problem found in a shared library built from `source` (C++), or "" for none.
std::string verdict_on(const std::string& source, std::vector<std::string> link_flags = {}) {
  test::TempDir d("mgk-code");
  std::ofstream(d.path() / "lib.cc") << source;
  std::vector<std::string> argv = {"g++", "-shared", "-fPIC", "-O2", "-o", (d.path() / "lib.so").string(),
                                   (d.path() / "lib.cc").string()};
  argv.insert(argv.end(), link_flags.begin(), link_flags.end());
  auto built = process::run_tool(argv, std::chrono::minutes(1));
  EXPECT_TRUE(built.ok()) << built.output;
  auto v = executable_code_violation(ElfImage(d.path() / "lib.so"));
  return v ? *v : "";
}

TEST(ExecutableCode, PlainHostCodePasses) {
  EXPECT_EQ(verdict_on("extern \"C\" int mgk_run(int x) { return x * 3 + 1; }\n"), "");
}

TEST(ExecutableCode, ASectionOfItsOwnThatIsExecutableIsRefused) {
  const std::string got = verdict_on(R"(
asm(".pushsection .evil,\"ax\",@progbits\n"
    ".globl evil_getpid\n evil_getpid:\n mov $39, %eax\n syscall\n ret\n"
    ".popsection\n");
extern "C" int evil_getpid();
extern "C" int mgk_run() { return evil_getpid(); }
)");
  EXPECT_EQ(got, "its section '.evil' is executable (only the compiler's code sections may be)");
}

TEST(ExecutableCode, ASystemCallInstructionInTheCodeIsRefusedNamingItsFunction) {
  const std::string got = verdict_on(R"(
extern "C" long mgk_run() { long r; asm volatile("syscall" : "=a"(r) : "a"(39) : "rcx", "r11", "memory"); return r; }
)");
  EXPECT_EQ(got.rfind("a 'syscall' instruction at 0x", 0), 0u) << got;
  EXPECT_NE(got.find("<mgk_run>"), std::string::npos) << got;
}

TEST(ExecutableCode, AnExecutableStackIsRefused) {
  EXPECT_EQ(verdict_on("extern \"C\" int mgk_run() { return 0; }\n", {"-Wl,-z,execstack"}),
            "it asks for an executable stack");
}

}  // namespace
}  // namespace mgk::eval
