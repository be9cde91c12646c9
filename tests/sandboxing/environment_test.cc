#include "sandboxing/environment.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace mgk::sandboxing {
namespace {

TEST(Environment, SecretsNeverPassWhateverTheirPrefix) {
  for (const char* name : {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN", "AWS_SECRET",
                           "CUDA_SECRET", "NCCL_IB_TOKEN", "MGK_API_KEY", "db_password",
                           "GOOGLE_APPLICATION_CREDENTIALS", "api_key"})
    EXPECT_TRUE(looks_like_secret(name)) << name;
  for (const char* name : {"PATH", "CUDA_VISIBLE_DEVICES", "NCCL_DEBUG", "KEYBOARD", "MONKEY"})
    EXPECT_FALSE(looks_like_secret(name)) << name;
}

TEST(Environment, OnlyTheAllowListPasses) {
  EnvMap parent = {{"PATH", "/usr/bin"},
                   {"HOME", "/home/someone"},
                   {"LANG", "C.UTF-8"},
                   {"LC_ALL", "C"},
                   {"CUDA_VISIBLE_DEVICES", "2,3"},
                   {"NCCL_DEBUG", "INFO"},
                   {"NCCL_NVLS_ENABLE", "1"},
                   {"MGK_DB", "/data/mgk.db"},
                   {"LD_LIBRARY_PATH", "/usr/local/cuda/lib64"},
                   {"OPENAI_API_KEY", "sk-should-not-pass"},
                   {"CUDA_ACCESS_TOKEN", "nope"},
                   {"SSH_AUTH_SOCK", "/tmp/agent"},
                   {"PYTHONPATH", "/x"}};
  EnvMap env = scrubbed_environment(parent, {{"MGK_HOME", "/sb/.mgk"}}, "/sb");
  EnvMap expected = {{"PATH", "/usr/bin"},
                     {"HOME", "/sb"},
                     {"LANG", "C.UTF-8"},
                     {"LC_ALL", "C"},
                     {"CUDA_VISIBLE_DEVICES", "2,3"},
                     {"NCCL_DEBUG", "INFO"},
                     {"NCCL_NVLS_ENABLE", "0"},  // forced off
                     {"NVSHMEM_DISABLE_NVLS", "1"},
                     {"MGK_DB", "/data/mgk.db"},
                     {"MGK_HOME", "/sb/.mgk"},
                     {"LD_LIBRARY_PATH", "/usr/local/cuda/lib64"}};
  EXPECT_EQ(env, expected);
}

TEST(Environment, ExtraVariablesOverrideTheParentsButASecretIsABug) {
  EnvMap env = scrubbed_environment({{"PATH", "/usr/bin"}}, {{"PATH", "/opt/mgk/bin:/usr/bin"}}, "/sb");
  EXPECT_EQ(env["PATH"], "/opt/mgk/bin:/usr/bin");
  EXPECT_THROW(scrubbed_environment({}, {{"OPENAI_API_KEY", "sk"}}, "/sb"), Error);
}

TEST(Environment, ProvidesAPathWhenTheParentHasNone) {
  EnvMap env = scrubbed_environment({}, {}, "/sb");
  EXPECT_FALSE(env["PATH"].empty());
}

}  // namespace
}  // namespace mgk::sandboxing
