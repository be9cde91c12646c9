// Real nvcc (no GPU needed): the compile cache, its key, errors with file:line, and the
// policy that refuses known reward hacks before compiling.
#include "eval/compile.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/test_paths.h"

namespace mgk::eval {
namespace {

class CompileTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("MGK_HOME", home_.path().c_str(), 1); }
  void TearDown() override { unsetenv("MGK_HOME"); }
  std::filesystem::path write(const std::string& name, const std::string& text) {
    auto p = src_.path() / name;
    std::ofstream(p) << text;
    return p;
  }
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
  EXPECT_TRUE(std::filesystem::exists(a.library));
  CompileResult b = compile(req);
  EXPECT_TRUE(b.ok);
  EXPECT_TRUE(b.cached);
  EXPECT_EQ(a.key, b.key);
  req.defines = {"VALUE=2.0f"};
  CompileResult c = compile(req);
  EXPECT_TRUE(c.ok) << c.log;
  EXPECT_NE(c.key, a.key);
}

TEST_F(CompileTest, ErrorsCarryFileAndLine) {
  auto src = write("bad.cu", "#include \"mgk/solution.h\"\nint f() { return undefined_name; }\n");
  CompileResult r = compile({src, {}, {}, {}, "sm_90a", false});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("bad.cu(2)"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("undefined_name"), std::string::npos) << r.log;
  EXPECT_FALSE(compile({src, {}, {}, {}, "sm_90a", false}).cached) << "failures are not cached";
}

TEST(Policy, RefusesNcclDynamicLoadingOracleAndMulticastButNotProse) {
  EXPECT_NE(policy_violation("ncclAllReduce(a, b);", false).find("NCCL"), std::string::npos);
  EXPECT_EQ(policy_violation("ncclAllReduce(a, b);", true), "");  // references may
  EXPECT_NE(policy_violation("void* h = dlopen(\"x\", 0);", false), "");
  EXPECT_NE(policy_violation("mgk_oracle(ctx, a, s);", false), "");
  EXPECT_NE(policy_violation("asm(\"multimem.ld_reduce.add\");", true).find("multicast"), std::string::npos);
  EXPECT_NE(policy_violation("cuMulticastCreate(&h, &p);", true), "");
  // Comments and strings do not count (except asm strings are code: multimem is caught above).
  EXPECT_EQ(policy_violation("// faster than NCCL\n/* dlopen */ int x;\nconst char* s = \"nccl\";", false), "");
  std::string v = policy_violation("int a;\nint b;\nncclSend();", false);
  EXPECT_NE(v.find("line 3"), std::string::npos) << v;
}

}  // namespace
}  // namespace mgk::eval
