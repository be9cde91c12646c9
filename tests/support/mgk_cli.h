// Runs the built `mgk` binary as a user would, for end-to-end tests; and the one answer to
// "is there a GPU here" that GPU tests may skip on.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace mgk::test {

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
  double seconds = 0;
  // The first {...} JSON document in the output (for --json runs); null when none.
  nlohmann::json json() const;
};

// Fails the test (ASSERT) when the mgk binary is missing. Unless `env` or `args` name a store
// (MGK_DB, XDG_DATA_HOME, HOME, --db), mgk gets one of this test process's own.
CliResult run_mgk(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
                  int timeout_s = 600);

// Expects an `mgk eval --json` run to end in `verdict`; with `failure_kind` (mismatch,
// modified_input, incomplete) the last size's failure must be of that kind, and with
// `failure_part` its failure text must contain it. Fields, not a search of the whole JSON.
void expect_verdict(const CliResult& r, const std::string& verdict, const std::string& failure_kind = "",
                    const std::string& failure_part = "");
// The verdict's message must contain `part` (for verdicts with no size results: refusals,
// runtime errors, hangs).
void expect_message(const CliResult& r, const std::string& part);

// One line for the log: "rejected: NAME: VERDICT: why".
void print_verdict(const std::string& name, const CliResult& r);

// What `mgk-harness probe` says of this machine, asked once per process.
struct GpuProbe {
  enum class State {
    kGpus,    // GPUs are visible
    kNoGpu,   // the probe said cleanly that there is none (no driver, or no device)
    kBroken,  // anything else: no harness, it crashed, exited non-zero, printed no JSON
  } state = State::kBroken;
  int count = 0;
  std::string why;
};
const GpuProbe& probe_gpus();

// True when a GPU is visible (`count` gets how many); false where the probe says cleanly
// that there is none. A broken probe fails the calling test (and returns false).
bool gpus_available(int* count = nullptr);

// The world size GPU tests run at: $MGK_TEST_WORLD, else 2. `explicit_world` tells whether
// the variable was set (then too few GPUs is a failure, not a skip).
int test_world(bool* explicit_world = nullptr);

}  // namespace mgk::test

// In a GPU test's SetUp: skips only where the probe says cleanly that there is no GPU (or,
// for `per_rank`, where the default world needs more GPUs than there are); fails on a broken
// probe and on an explicit MGK_TEST_WORLD the machine cannot serve.
#define MGK_REQUIRE_GPUS(per_rank)                                                                        \
  do {                                                                                                    \
    const auto& mgk_probe_ = ::mgk::test::probe_gpus();                                                   \
    if (mgk_probe_.state == ::mgk::test::GpuProbe::State::kBroken)                                        \
      GTEST_FAIL() << "the GPU probe is broken, so GPU tests cannot run: " << mgk_probe_.why;             \
    if (mgk_probe_.state == ::mgk::test::GpuProbe::State::kNoGpu)                                         \
      GTEST_SKIP() << "skipped: no GPU (" << mgk_probe_.why << ")";                                       \
    bool mgk_explicit_ = false;                                                                           \
    const int mgk_need_ = (per_rank) ? ::mgk::test::test_world(&mgk_explicit_) : 1;                       \
    if (mgk_probe_.count < mgk_need_) {                                                                   \
      if (mgk_explicit_)                                                                                  \
        GTEST_FAIL() << "MGK_TEST_WORLD=" << mgk_need_ << " but only " << mgk_probe_.count << " GPU(s) are visible"; \
      GTEST_SKIP() << "skipped: needs " << mgk_need_ << " GPUs (one per rank), " << mgk_probe_.count          \
                   << " visible; the shared-GPU tests cover one GPU";                                     \
    }                                                                                                     \
  } while (0)
