// The refusals judged on preprocessed text: what they find, what they leave alone (prose,
// strings, the trusted headers that declare the refused functions), and where they say.
#include "eval/source_policy.h"

#include <gtest/gtest.h>

namespace mgk::eval {
namespace {

// Text as nvcc -E writes it: line markers, then the file's lines.
std::string from(const std::string& file, const std::string& body, int first_line = 1) {
  return "# " + std::to_string(first_line) + " \"" + file + "\"\n" + body;
}

// What a candidate's build trusts (eval::mgk_header_dirs(false) and the system's): the
// reference kit, sandbox/reference, is not among them.
const std::vector<std::filesystem::path> kTrusted = {"/usr/include", "/opt/mgk/src/abi", "/opt/mgk/primitives"};

std::string violation(const std::string& text, bool reference = false) {
  auto v = check_preprocessed(text, kTrusted, reference);
  return v ? v->describe() : "";
}

TEST(SourcePolicy, RefusesNcclLoadingTheOracleAndMulticastNamingFileAndLine) {
  EXPECT_EQ(violation(from("k.cu", "int a;\nint b;\nncclSend();\n")),
            "k.cu:3: 'ncclSend': candidates may not call NCCL: the task is to replace it");
  EXPECT_EQ(violation(from("k.cu", "void* h = dlopen(\"x\", 0);\n")),
            "k.cu:1: 'dlopen': candidates may not load or look up code at run time");
  EXPECT_EQ(violation(from("k.cu", "mgk_oracle(ctx, a, s);\n")),
            "k.cu:1: 'mgk_oracle': candidates may not define or call the oracle");
  EXPECT_NE(violation(from("k.cu", "asm(\"multimem.ld_reduce.add.f32 %0, [%1];\");\n"), true).find("'multimem.'"),
            std::string::npos);
  EXPECT_NE(violation(from("k.cu", "cuMulticastCreate(&h, &p);\n"), true).find("NVLink multicast"), std::string::npos);
}

TEST(SourcePolicy, ReferencesMayUseNcclButNotMulticast) {
  EXPECT_EQ(violation(from("reference.cu", "ncclAllReduce(a, b);\n"), true), "");
  EXPECT_NE(violation(from("reference.cu", "cudaDeviceReset();\n"), true), "");
}

TEST(SourcePolicy, LineMarkersPlaceTheFinding) {
  // The preprocessor resumes k.cu at line 40 after an include.
  std::string text = from("k.cu", "int a;\n") + "# 1 \"/usr/include/nccl.h\" 1\nncclResult_t ncclSend();\n" +
                     "# 40 \"k.cu\" 2\nint b;\nncclSend();\n";
  EXPECT_EQ(violation(text), "k.cu:41: 'ncclSend': candidates may not call NCCL: the task is to replace it");
}

TEST(SourcePolicy, TrustedHeadersDeclareWhatTheCandidateMayNotCall) {
  std::string text = "# 1 \"/usr/include/dlfcn.h\"\nextern void* dlopen(const char*, int);\n"
                     "# 1 \"/opt/mgk/src/abi/mgk/solution.h\"\nextern void* dlsym(void*, const char*);\n" +
                     from("k.cu", "int x = 1;\n");
  EXPECT_EQ(violation(text), "");
  // A header of the candidate's own is judged like its kernel file, and so is the reference
  // kit, which a candidate's build does not trust (it is not on its include path either).
  EXPECT_NE(violation(from("/sandbox/attempt/helper.h", "ncclAllReduce();\n")), "");
  EXPECT_NE(violation(from("/opt/mgk/sandbox/reference/mgk/reference.h", "ncclAllReduce();\n")), "");
}

TEST(SourcePolicy, ProseAndStringsAreNotCode) {
  EXPECT_EQ(violation(from("k.cu", "const char* s = \"faster than nccl\"; int dlopen_count;\n")), "");
  EXPECT_EQ(violation(from("k.cu", "int x; // beats NCCL\n")), "");
  EXPECT_EQ(violation("# 1 \"<built-in>\"\n#define __NCCL_THING 1\nint nccl_like;\n"), "")
      << "<built-in> and <command-line> are the compiler's";
}

TEST(SourcePolicy, PtxIsSearchedForMulticastOnly) {
  EXPECT_EQ(check_ptx("ld.global.f32 %f1, [%rd1];\nst.global.f32 [%rd2], %f1;\n", "k.cu (generated PTX)"), std::nullopt);
  auto v = check_ptx("mov.u32 %r1, 0;\nmultimem.ld_reduce.relaxed.sys.global.add.f32 %f1, [%rd1];\n", "k.ptx");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->line, 2);
  EXPECT_EQ(v->found, "multimem.ld_reduce");
}

}  // namespace
}  // namespace mgk::eval
