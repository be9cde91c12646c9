// Real nvcc (no GPU needed): the compile cache and its key, errors with file:line, what is
// judged being the bytes compiled, and the refusals on the preprocessed source, the PTX and
// the built library, for every candidate under tests/ and every expert.
#include "eval/compile.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/error.h"
#include "common/hash.h"
#include "support/test_paths.h"

namespace mgk::eval {
namespace {

namespace fs = std::filesystem;

class CompileTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("MGK_HOME", home_.path().c_str(), 1); }
  void TearDown() override { unsetenv("MGK_HOME"); }
  fs::path write(const std::string& name, const std::string& text) {
    auto p = src_.path() / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  CompileResult candidate(const fs::path& src) { return compile({src, {}, {}, {}, "sm_90a", false}); }
  test::TempDir home_{"mgk-home"}, src_{"mgk-src"};
};

const char* kGood = R"(#include "mgk/solution.h"
MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }
MGK_EXPORT void mgk_teardown(mgk_ctx*) {}
__global__ void k(float* y) { y[threadIdx.x] = VALUE; }
MGK_EXPORT int mgk_run(mgk_ctx*, const mgk_tensor*, int, const mgk_tensor* out, int, cudaStream_t s) {
  k<<<1, 32, 0, s>>>(static_cast<float*>(out[0].data));
  return 0;
}
)";

TEST_F(CompileTest, CompilesOnceThenHitsTheCacheAndFlagsChangeTheKey) {
  auto src = write("k.cu", kGood);
  CompileRequest req{src, {}, {"VALUE=1.0f"}, {}, "sm_90a", false};
  CompileResult a = compile(req);
  ASSERT_TRUE(a.ok) << a.log;
  EXPECT_FALSE(a.cached);
  EXPECT_TRUE(fs::exists(a.library));
  CompileResult b = compile(req);
  EXPECT_TRUE(b.ok);
  EXPECT_TRUE(b.cached);
  EXPECT_EQ(a.build_key, b.build_key);
  EXPECT_EQ(a.kernel_hash, b.kernel_hash);
  req.defines = {"VALUE=2.0f"};
  CompileResult c = compile(req);
  EXPECT_TRUE(c.ok) << c.log;
  EXPECT_NE(c.build_key, a.build_key);
  EXPECT_EQ(c.kernel_hash, a.kernel_hash) << "the source is the same; only the build differs";
}

TEST_F(CompileTest, EditingAnIncludedHeaderMakesANewBuild) {
  write("value.h", "#define VALUE 1.0f\n");
  auto src = write("k.cu", std::string("#include \"value.h\"\n") + kGood);
  CompileResult a = candidate(src);
  ASSERT_TRUE(a.ok) << a.log;
  write("value.h", "#define VALUE 3.0f\n");
  CompileResult b = candidate(src);
  ASSERT_TRUE(b.ok) << b.log;
  EXPECT_FALSE(b.cached) << "a stale library was reused after its header changed";
  EXPECT_NE(a.build_key, b.build_key);
}

TEST_F(CompileTest, WhatIsJudgedIsTheBytesThatWereRead) {
  auto src = write("k.cu", std::string(kGood) + "// first\n");
  CompileResult a = compile({src, {}, {"VALUE=1.0f"}, {}, "sm_90a", false});
  ASSERT_TRUE(a.ok) << a.log;
  EXPECT_EQ(a.source, std::string(kGood) + "// first\n");
  EXPECT_EQ(a.kernel_hash, sha256_hex(a.source));
  write("k.cu", "edited afterwards");
  EXPECT_EQ(a.kernel_hash, sha256_hex(std::string(kGood) + "// first\n"));
}

TEST_F(CompileTest, ErrorsCarryTheFileAsGivenAndTheLine) {
  auto src = write("bad.cu", "#include \"mgk/solution.h\"\nint f() { return undefined_name; }\n");
  CompileResult r = candidate(src);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find(src.string() + "(2)"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("undefined_name"), std::string::npos) << r.log;
  EXPECT_FALSE(candidate(src).cached) << "failures are not cached";
}

TEST_F(CompileTest, ADirectoryIsAUsageErrorNamingIt) {
  try {
    candidate(src_.path());
    FAIL() << "a directory was compiled";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), src_.path().string() + " is a directory, not a kernel file (.cu)");
  }
}

TEST_F(CompileTest, BytesThatAreNotUtf8AreAnUnreadableSourceWithTheOffset) {
  auto src = write("latin1.cu", std::string("// caf\xe9\n") + kGood);
  CompileResult r = candidate(src);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.unreadable, "latin1.cu is not UTF-8 text (the first invalid byte is at offset 6): save it as UTF-8");
}

TEST_F(CompileTest, ALibraryWithoutTheAbiIsRefusedNamingTheFunction) {
  auto src = write("noabi.cu", R"(#include "mgk/solution.h"
MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }
int mgk_run(mgk_ctx*, const mgk_tensor*, int, const mgk_tensor*, int, cudaStream_t) { return 0; }
MGK_EXPORT void mgk_teardown(mgk_ctx*) {}
)");
  CompileResult r = candidate(src);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.refusal.find("does not export 'mgk_run'"), std::string::npos) << r.refusal;
}

TEST_F(CompileTest, AMulticastMnemonicGluedByTheCompilerIsFoundInThePtx) {
  // The mnemonic is glued from two literals by the compiler, after preprocessing: no text
  // check sees it; the PTX nvcc made does.
  auto src = write("mc.cu", R"(#include "mgk/solution.h"
__global__ void k(float* p) {
#if defined(__CUDA_ARCH__)
  float v;
  asm volatile("multi" "mem.ld_reduce.relaxed.sys.global.add.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
  p[0] = v;
#endif
}
MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }
MGK_EXPORT void mgk_teardown(mgk_ctx*) {}
MGK_EXPORT int mgk_run(mgk_ctx*, const mgk_tensor*, int, const mgk_tensor* out, int, cudaStream_t s) {
  k<<<1, 1, 0, s>>>(static_cast<float*>(out[0].data));
  return 0;
}
)");
  CompileResult r = candidate(src);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.refusal.find("generated PTX"), std::string::npos) << r.refusal;
  EXPECT_NE(r.refusal.find("multimem.ld_reduce"), std::string::npos) << r.refusal;
}

TEST_F(CompileTest, AHostSyscallInstructionIsRefused) {
  auto src = write("sys.cu", std::string(kGood).replace(std::string(kGood).find("MGK_EXPORT int mgk_setup"),
                                                        sizeof("MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }") - 1,
                                                        "MGK_EXPORT int mgk_setup(mgk_ctx*) { long r; asm volatile(\"syscall\" : \"=a\"(r) : \"a\"(39L)); return 0; }"));
  CompileResult r = compile({src, {}, {"VALUE=1.0f"}, {}, "sm_90a", false});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.refusal.find("the built library's host code: a 'syscall' instruction at 0x"), std::string::npos)
      << r.refusal << r.log;
  EXPECT_NE(r.refusal.find("<mgk_setup>"), std::string::npos) << r.refusal;
  EXPECT_EQ(r.refused_rule, "hidden-code") << "the feedback quotes the rule by this id";
}

// Every bad candidate that is bad in what it links or calls is refused, with the reason;
// every other candidate (the plain ones, the primitive tests' kernels, the experts, the bad
// ones whose flaw shows only when run) passes every check.
TEST_F(CompileTest, TheSuiteOfCandidatesIsJudgedAsItsReadmeSays) {
  const fs::path tests = test::tests_dir();
  struct Refused {
    const char* file;
    const char* part;
  };
  for (const Refused& r : {Refused{"bad_candidates/uses_nccl.cu", "uses_nccl.cu:9: 'ncclAllReduce': candidates may not call NCCL"},
                           Refused{"bad_candidates/pasted_nccl.cu", "pasted_nccl.cu:12: 'ncclAllReduce': candidates may not call NCCL"},
                           Refused{"bad_candidates/opens_socket.cu", "opens_socket.cu:12: the built library imports 'socket': candidates may not use sockets"}}) {
    SCOPED_TRACE(r.file);
    CompileResult c = candidate(tests / r.file);
    EXPECT_FALSE(c.ok);
    EXPECT_NE(c.refusal.find(r.part), std::string::npos) << c.refusal << "\n" << c.log;
  }
  std::vector<fs::path> accepted;
  for (const auto& e : fs::directory_iterator(tests / "gpu/candidates"))
    if (e.path().extension() == ".cu") accepted.push_back(e.path());
  for (const auto& e : fs::directory_iterator(tests / "primitives/kernels"))
    if (e.path().extension() == ".cu") accepted.push_back(e.path());
  for (const char* ok : {"wrong_values", "all_zeros", "constant", "modifies_input", "one_rank_unwritten", "partial_write",
                         "side_stream", "no_start_sync", "hang", "crash", "reads_api_key", "forgets_tail", "skips_unchecked"})
    accepted.push_back(tests / "bad_candidates" / (std::string(ok) + ".cu"));
  for (const auto& e : fs::recursive_directory_iterator(test::source_dir() / "problems"))
    if (e.path().filename() == "expert.cu") accepted.push_back(e.path());
  for (const auto& p : accepted) {
    SCOPED_TRACE(p.string());
    CompileResult c = candidate(p);
    EXPECT_TRUE(c.ok) << c.refusal << "\n" << c.log;
  }
}

}  // namespace
}  // namespace mgk::eval
