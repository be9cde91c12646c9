// Ranks sharing one GPU (`mgk eval --gpus 0,0,...`): what a machine with fewer GPUs than
// ranks can check. The ranks' processes time-slice the GPU, so each wait on a peer costs a
// slice (milliseconds): slow, but the protocols (flags, Lamport slots, credits, handshakes)
// run at any world size, checked against the oracle (indexing, epochs, deadlocks; not
// memory-ordering races, since the ranks take turns). Nothing is timed; NCCL does not run.
// Needs one GPU (ctest label `gpu`).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "gpu/collectives.h"
#include "support/mgk_cli.h"
#include "support/test_paths.h"

namespace mgk::test {
namespace {

class SharedGpuEval : public ::testing::Test {
 protected:
  void SetUp() override { MGK_REQUIRE_GPUS(false); }
  // `world` ranks, all on GPU 0; two trials and the back-to-back calls at each size.
  CliResult eval(const std::string& problem, int world, std::vector<std::string> extra,
                 const std::string& sizes = "tiny,odd", std::map<std::string, std::string> env = {}) {
    std::string gpus = "0";
    for (int r = 1; r < world; ++r) gpus += ",0";
    std::vector<std::string> args = {"eval", "collectives/" + problem, "--trials", "2", "--json", "--no-store", "--gpus", gpus};
    if (!sizes.empty()) args.insert(args.end(), {"--size", sizes});
    args.insert(args.end(), extra.begin(), extra.end());
    env["MGK_HOME"] = (build_dir() / "gpu-test-home").string();
    return run_mgk(args, env);
  }
};

// W = 4 runs the experts' paths for more than two ranks, which a two-GPU machine never does.
TEST_F(SharedGpuEval, ExpertsPassUntimedAtWorldTwoAndFour) {
  for (int world : {2, 4}) {
    for (const char* p : kCollectives) {
      SCOPED_TRACE(std::string(p) + " at world " + std::to_string(world));
      auto r = eval(p, world, {"--expert"});
      expect_verdict(r, "correct");
      expect_message(r, "not timed: ranks share a GPU");
      EXPECT_EQ(r.exit_code, 0) << r.output;
      auto j = r.json();
      ASSERT_TRUE(j.contains("sizes")) << r.output;
      EXPECT_FALSE(j.value("timed", true));
      for (const auto& s : j["sizes"]) {
        EXPECT_EQ(s.value("trials_passed", 0), 2) << r.output;
        EXPECT_TRUE(s["candidate"].is_null() && s["reference"].is_null()) << "shared ranks must not be timed";
      }
    }
  }
}

// $MGK_TEST_SHARED_WORLD runs the variants at another world size (default 4), and
// $MGK_TEST_SHARED_SIZES at other presets (default small,odd: a full size and the tails; a
// device visit with minutes to spare asks for tiny,small,medium,large,odd).
// $MGK_TEST_VARIANTS picks which: K/N every N-th from the K-th (0-based), so N processes side
// by side share the compiles and the GPU's idle slices, or a list of indices ("2,10,11") to
// run again what a visit saw fail.
std::vector<size_t> variants_to_run() {
  std::vector<size_t> picked;
  const char* s = std::getenv("MGK_TEST_VARIANTS");
  int k = 0, n = 1;
  if (s && *s && std::strchr(s, '/')) {
    if (std::sscanf(s, "%d/%d", &k, &n) != 2 || n <= 0 || k < 0 || k >= n)
      throw std::invalid_argument(std::string("MGK_TEST_VARIANTS=") + s + ": expected K/N with K in 0..N-1, e.g. 0/2");
  } else if (s && *s) {
    std::stringstream list(s);
    for (std::string item; std::getline(list, item, ',');) {
      const size_t i = std::stoul(item);
      if (i >= kExpertVariants.size())
        throw std::invalid_argument(std::string("MGK_TEST_VARIANTS=") + s + ": index " + item + " is past the " +
                                    std::to_string(kExpertVariants.size()) + " variants");
      picked.push_back(i);
    }
    return picked;
  }
  for (size_t i = k; i < kExpertVariants.size(); i += n) picked.push_back(i);
  return picked;
}

TEST_F(SharedGpuEval, ExpertVariantsPassWithSharedRanks) {
  const char* w = std::getenv("MGK_TEST_SHARED_WORLD");
  const int world = w && *w ? std::atoi(w) : 4;
  const char* sizes = std::getenv("MGK_TEST_SHARED_SIZES");
  for (size_t i : variants_to_run()) {
    const auto& [problem, defines] = kExpertVariants[i];
    std::ostringstream label_text;
    label_text << '#' << i << ' ' << variant_label(problem, defines) << " at world " << world;
    const std::string label = label_text.str();
    SCOPED_TRACE(label);
    const auto start = std::chrono::steady_clock::now();
    // The hang bound at 120 s, not 20: ranks taking turns on one GPU need more than 20 s for a
    // large preset's back-to-back calls (seen: Lamport lag 1 at W = 2); a real hang still ends.
    std::vector<std::string> args = expert_variant_args(defines);
    args.insert(args.end(), {"--timeout", "120"});
    CliResult r = eval(problem, world, args, sizes && *sizes ? sizes : "small,odd");
    expect_verdict(r, "correct");
    // One line per variant, so a visit cut short still says which passed.
    const auto j = r.json();
    std::cout << "variant " << label << ": " << (j.is_null() ? "no JSON" : j.value("verdict", "?")) << " in "
              << std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start).count()
              << " s" << std::endl;
  }
}

// The ABI hands mgk_setup a descriptor of every tensor mgk_run will get (dtype included,
// so workspace can be sized by it); the candidate fails its run on any difference.
TEST_F(SharedGpuEval, SetupSeesTheTensorsRunGets) {
  const std::string kernel = (tests_dir() / "gpu/candidates/setup_descriptors.cu").string();
  for (const char* dtype : {"bf16", "f32"}) {
    SCOPED_TRACE(dtype);
    expect_verdict(eval("all_reduce", 2, {kernel, "--dtype", dtype}, "tiny,odd"), "correct");
  }
}

// Every bad candidate that ranks taking turns on one GPU can catch is rejected, for its reason.
TEST_F(SharedGpuEval, EveryBadCandidateIsRejectedForItsReason) {
  for (const auto& b : kBadCandidates) {
    if (!b.shared_gpu_catches) continue;
    SCOPED_TRACE(b.file);
    std::vector<std::string> extra = {(tests_dir() / "bad_candidates" / (std::string(b.file) + ".cu")).string()};
    if (std::string(b.verdict) == "timeout") extra.insert(extra.end(), {"--timeout", "10"});
    CliResult r = eval("all_reduce", 2, extra, b.sizes);
    if (std::string(b.verdict) == "incorrect") expect_verdict(r, "incorrect", b.failure_kind, b.part);
    else {
      expect_verdict(r, b.verdict);
      expect_message(r, b.part);
    }
    print_verdict(b.file, r);
    if (std::string(b.file) == "forgets_tail") expect_message(r, "incorrect at size odd");
  }
}

// The candidate's process gets none of mgk's secrets: a key planted in mgk's environment
// is neither in what the candidate printed (its log) nor anywhere in the result.
TEST_F(SharedGpuEval, TheCandidateCannotReadTheApiKey) {
  TempDir work("mgk-key-work");
  const std::string key = "sk-planted-secret-4242";
  CliResult r = eval("all_reduce", 2,
                     {(tests_dir() / "bad_candidates/reads_api_key.cu").string(), "--work-dir", work.path().string()},
                     "tiny", {{"OPENAI_API_KEY", key}, {"ANTHROPIC_API_KEY", key}, {"MGK_TEST_PLANTED_SECRET", key}});
  expect_verdict(r, "correct");
  EXPECT_EQ(r.output.find(key), std::string::npos) << r.output;
  for (int rank = 0; rank < 2; ++rank) {
    std::ifstream in(work.path() / ("rank" + std::to_string(rank) + ".candidate.log"));
    std::stringstream log;
    log << in.rdbuf();
    SCOPED_TRACE(log.str());
    EXPECT_NE(log.str().find("candidate sees OPENAI_API_KEY=(unset)"), std::string::npos);
    EXPECT_NE(log.str().find("candidate sees MGK_TEST_PLANTED_SECRET=(unset)"), std::string::npos);
    EXPECT_EQ(log.str().find(key), std::string::npos);
  }
  EXPECT_NE(r.json().value("isolation", ""), "none") << "the candidate ran without isolation: " << r.output;
}

// A reference the harness cannot load is the suite's fault: infrastructure (exit 3), never
// the candidate's runtime_error, though the harness's Load command names the candidate.
// The suite here is a copy whose all_reduce reference exports its oracle under another name.
TEST_F(SharedGpuEval, AReferenceThatCannotBeLoadedIsInfrastructureNotTheCandidates) {
  TempDir root("mgk-broken-suite");
  for (const char* d : {"src", "sandbox", "primitives", "prompts"})
    std::filesystem::create_directory_symlink(source_dir() / d, root.path() / d);
  const auto from = source_dir() / "problems/collectives/all_reduce", to = root.path() / "problems/collectives/all_reduce";
  std::filesystem::create_directories(to);
  for (const char* f : {"problem.json", "statement.md", "expert.cu"}) std::filesystem::copy_file(from / f, to / f);
  std::ifstream in(from / "reference.cu");
  std::stringstream text;
  text << in.rdbuf();
  std::string reference = text.str();
  const size_t at = reference.find("mgk_oracle(");
  ASSERT_NE(at, std::string::npos) << "the all_reduce reference no longer defines mgk_oracle";
  reference.replace(at, std::strlen("mgk_oracle"), "mgk_oracle_misnamed");
  std::ofstream(to / "reference.cu") << reference;

  auto r = eval("all_reduce", 2, {(tests_dir() / "gpu/candidates/all_reduce.cu").string()}, "tiny",
                {{"MGK_ROOT", root.path().string()}});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  expect_verdict(r, "infrastructure");
  expect_message(r, "does not export 'mgk_oracle'");
  expect_message(r, "the reference: a bug in mgk's suite");
}

TEST_F(SharedGpuEval, TheNcclReferenceIsRefusedWithAClearReason) {
  auto r = eval("all_reduce", 2, {"--reference"});
  EXPECT_EQ(r.exit_code, 64) << r.output;
  EXPECT_NE(r.output.find("NCCL refuses"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace mgk::test
