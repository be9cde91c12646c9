// Real nvcc (no GPU needed): the compile cache and its key, errors with file:line, what is
// judged being the bytes compiled, and the refusals on the preprocessed source, the PTX and
// the built library, for every candidate under tests/ and every expert.
#include "eval/compile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "common/error.h"
#include "common/hash.h"
#include "process/run.h"
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
  CompileResult candidate(const fs::path& src) { return compile({src, {}, {}, {}, "sm_90a", false, ""}); }
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
  CompileRequest req{src, {}, {"VALUE=1.0f"}, {}, "sm_90a", false, ""};
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

// The fast path: the cache is keyed on content, so the same bytes under another name in
// another folder are found from the bytes alone. MGK_NVCC pointing nowhere proves that no
// nvcc ran (not even nvcc -E): any call of it would throw.
TEST_F(CompileTest, AByteIdenticalKernelUnderAnotherNameInAnotherFolderIsFoundWithoutNvcc) {
  auto src = write("k.cu", kGood);
  CompileRequest req{src, {}, {"VALUE=1.0f"}, {}, "sm_90a", false, ""};
  CompileResult a = compile(req);
  ASSERT_TRUE(a.ok) << a.log;
  test::TempDir elsewhere("mgk-elsewhere");
  req.source = elsewhere.path() / "kernel_turn7.cu";
  fs::copy_file(src, req.source);
  setenv("MGK_NVCC", "/nonexistent/nvcc", 1);
  CompileResult b;
  try {
    b = compile(req);
  } catch (const Error& e) {
    ADD_FAILURE() << "nvcc was run for a kernel built before: " << e.what();
  }
  unsetenv("MGK_NVCC");
  EXPECT_TRUE(b.ok && b.cached) << b.log;
  EXPECT_EQ(b.build_key, a.build_key);
  EXPECT_EQ(b.library, a.library);
  EXPECT_EQ(b.phases.preprocess, 0.0);
  EXPECT_LT(b.phases.lookup, 1.0) << "a hit is file reads only (the benchmark times it: bench/RESULTS.md)";
}

// A kernel beside headers of its own is found in another folder beside the same headers;
// with one of them changed there, it is built again, and the first folder still hits.
TEST_F(CompileTest, AKernelWithItsOwnHeadersIsFoundBesideTheSameHeadersAndRebuiltBesideAnEditedOne) {
  write("value.h", "#define VALUE 1.0f\n");
  auto src = write("k.cu", std::string("#include \"value.h\"\n") + kGood);
  CompileResult a = candidate(src);
  ASSERT_TRUE(a.ok) << a.log;
  test::TempDir other("mgk-other");
  fs::copy_file(src, other.path() / "k.cu");
  std::ofstream(other.path() / "value.h") << "#define VALUE 1.0f\n";
  CompileResult b = candidate(other.path() / "k.cu");
  EXPECT_TRUE(b.ok && b.cached) << b.log;
  EXPECT_EQ(b.phases.preprocess, 0.0) << "found from the bytes and the headers' digests, without nvcc -E";
  std::ofstream(other.path() / "value.h") << "#define VALUE 2.0f\n";
  CompileResult c = candidate(other.path() / "k.cu");
  ASSERT_TRUE(c.ok) << c.log;
  EXPECT_FALSE(c.cached) << "a library built with another value.h was reused";
  EXPECT_NE(c.build_key, a.build_key);
  EXPECT_TRUE(candidate(src).cached);
}

// A file in the kernel's folder that an #include could find instead of a header the build
// read elsewhere: the fast path is not taken (nvcc -E decides, and here it finds the same
// source, so the build is still reused).
TEST_F(CompileTest, AFileInTheKernelsFolderThatCouldStandForAHeaderTurnsTheFastPathOff) {
  auto src = write("k.cu", kGood);
  ASSERT_TRUE(compile({src, {}, {"VALUE=1.0f"}, {}, "sm_90a", false, ""}).ok);
  test::TempDir other("mgk-shadow");
  fs::copy_file(src, other.path() / "k.cu");
  // Named like the tail of mgk/solution.h (which the include path finds before this folder,
  // but the fast path does not reason about search orders: any tail counts).
  std::ofstream(other.path() / "solution.h") << "#error not this one\n";
  CompileResult b = compile({other.path() / "k.cu", {}, {"VALUE=1.0f"}, {}, "sm_90a", false, ""});
  EXPECT_TRUE(b.ok && b.cached) << b.log;
  EXPECT_GT(b.phases.preprocess, 0.0) << "the fast path was taken beside a file named like a header it read";
}

// The log kept with a build names the kernel as it is given each time, not as it was first.
TEST_F(CompileTest, AHitNamesTheKernelAsGivenThisTimeInTheKeptLog) {
  auto src = write("first.cu", std::string("#warning \"careful\"\n") + kGood);
  CompileResult a = compile({src, {}, {"VALUE=1.0f"}, {}, "sm_90a", false, ""});
  ASSERT_TRUE(a.ok) << a.log;
  EXPECT_NE(a.log.find(src.string() + ":1:2: warning"), std::string::npos) << a.log;
  const fs::path second = src_.path() / "second.cu";
  fs::copy_file(src, second);
  CompileResult b = compile({second, {}, {"VALUE=1.0f"}, {}, "sm_90a", false, "second.cu"});
  EXPECT_TRUE(b.cached);
  EXPECT_NE(b.log.find("second.cu:1:2: warning"), std::string::npos) << b.log;
  EXPECT_EQ(b.log.find(src_.path().string()), std::string::npos) << b.log;
}

// A reference skips the import checks: its library is never handed to a candidate.
TEST_F(CompileTest, TheSameBytesAsAReferenceAndAsACandidateAreTwoBuilds) {
  auto src = write("k.cu", kGood);
  CompileResult ref = compile({src, {}, {"VALUE=1.0f"}, {}, "sm_90a", true, ""});
  ASSERT_TRUE(ref.ok) << ref.log;
  CompileResult cand = compile({src, {}, {"VALUE=1.0f"}, {}, "sm_90a", false, ""});
  ASSERT_TRUE(cand.ok) << cand.log;
  EXPECT_FALSE(cand.cached);
  EXPECT_NE(cand.build_key, ref.build_key);
}

// What the compile benchmark times mgk against: the build's own nvcc command, which builds
// the file where it is, its own folder on the include path.
TEST_F(CompileTest, TheBareNvccCommandBuildsTheFileWhereItIs) {
  write("value.h", "#define VALUE 1.0f\n");
  auto src = write("k.cu", std::string("#include \"value.h\"\n") + kGood);
  const fs::path out = src_.path() / "bare.so";
  const std::vector<std::string> argv = nvcc_command({src, {}, {}, {}, "sm_90a", false, ""}, out);
  EXPECT_NE(std::find(argv.begin(), argv.end(), "-I" + src_.path().string()), argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), "-gencode=arch=compute_90a,code=sm_90a"), argv.end());
  const process::ProcessResult p = process::run_tool(argv, std::chrono::minutes(5));
  EXPECT_EQ(p.exit_code, 0) << p.output;
  EXPECT_TRUE(fs::exists(out));
}

TEST_F(CompileTest, WhatIsJudgedIsTheBytesThatWereRead) {
  auto src = write("k.cu", std::string(kGood) + "// first\n");
  CompileResult a = compile({src, {}, {"VALUE=1.0f"}, {}, "sm_90a", false, ""});
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

TEST_F(CompileTest, ErrorsNameTheKernelAsShownWithoutItsFolder) {
  auto src = write("kernel_turn2.cu", "#include \"mgk/solution.h\"\nint f() { return undefined_name; }\n");
  CompileResult r = compile({src, {}, {}, {}, "sm_90a", false, "kernel.cu"});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("kernel.cu(2): error"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find(src_.path().string()), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find(home_.path().string()), std::string::npos) << "the cache's path:\n" << r.log;
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
  // The checks alone (the mutants' test) see it too, and build nothing.
  CompileRequest checks{src, {}, {}, {}, "sm_90a", false};
  checks.checks_only = true;
  CompileResult c = compile(checks);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.refusal.find("multimem.ld_reduce"), std::string::npos) << c.refusal;
}

TEST_F(CompileTest, TheChecksAloneBuildNoLibraryAndCacheNothing) {
  auto src = write("good.cu", std::string(kGood));
  CompileRequest checks{src, {}, {"VALUE=1.0f"}, {}, "sm_90a", false};
  checks.checks_only = true;
  CompileResult c = compile(checks);
  ASSERT_TRUE(c.ok) << c.log << c.refusal;
  EXPECT_TRUE(c.library.empty());
  EXPECT_FALSE(c.cached);
  checks.checks_only = false;
  CompileResult full = compile(checks);
  ASSERT_TRUE(full.ok) << full.log;
  EXPECT_FALSE(full.cached) << "the checks alone left something in the cache";
  EXPECT_TRUE(std::filesystem::exists(full.library));
}

TEST_F(CompileTest, AHostSyscallInstructionIsRefused) {
  auto src = write("sys.cu", std::string(kGood).replace(std::string(kGood).find("MGK_EXPORT int mgk_setup"),
                                                        sizeof("MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }") - 1,
                                                        "MGK_EXPORT int mgk_setup(mgk_ctx*) { long r; asm volatile(\"syscall\" : \"=a\"(r) : \"a\"(39L)); return 0; }"));
  CompileResult r = compile({src, {}, {"VALUE=1.0f"}, {}, "sm_90a", false, ""});
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
