// The structure check (problems::StructureCheck): an evaluation below a problem's structure
// worlds is checked there too, with ranks sharing its GPUs, and a kernel wrong only there is
// incorrect. Scripted rank processes (tests/fakes/) stand in for the GPU ones; the problem is
// all-reduce with a structure check at W = 4 added, in a suite root of its own.
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/file.h"
#include "support/fakes.h"
#include "support/mgk_cli.h"
#include "support/test_paths.h"

namespace mgk::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kProblem = "structured/all_reduce";

class StructureCheck : public ::testing::Test {
 protected:
  // The suite's copy sits at one place for every test process (each test is one under
  // ctest), so that the reference it compiles is a hit in the shared cache after the first.
  // Made aside and renamed into place: concurrent tests never see half of it. Made again
  // when all_reduce's spec has changed since.
  static fs::path root() {
    const fs::path from = source_dir() / "problems/collectives/all_reduce";
    nlohmann::json spec = nlohmann::json::parse(read_file(from / "problem.json"));
    spec["structure_check"] = {{"worlds", {4}}, {"why", "rank 3 exists only from W = 4"}};
    const std::string spec_text = spec.dump(2);
    const fs::path root = build_dir() / "test-home" / "structure-suite", copied = root / "problems" / kProblem;
    if (fs::exists(copied / "problem.json")) {
      if (read_file(copied / "problem.json") == spec_text) return root;
      fs::remove_all(root);  // stale: from a build of older sources
    }
    const fs::path staged = build_dir() / "test-home" / ("structure-suite." + std::to_string(::getpid()));
    fs::remove_all(staged);
    for (const char* d : {"src", "sandbox", "primitives", "prompts"}) {
      fs::create_directories(staged);
      fs::create_directory_symlink(source_dir() / d, staged / d);
    }
    const fs::path to = staged / "problems" / kProblem;
    fs::create_directories(to);
    for (const char* f : {"reference.cu", "statement.md"}) fs::create_symlink(from / f, to / f);
    std::ofstream(to / "problem.json") << spec_text;
    std::error_code lost_the_race;  // another test put its copy there first: the same files
    fs::rename(staged, root, lost_the_race);
    if (lost_the_race) fs::remove_all(staged);
    return root;
  }
  CliResult eval(const std::string& scenario, const std::string& gpus) {
    return run_mgk({"eval", kProblem, (tests_dir() / "gpu/candidates/all_reduce.cu").string(), "--gpus", gpus, "--size",
                    "small", "--trials", "2", "--iterations", "10", "--json", "--no-store", "--timeout", "5"},
                   {{"MGK_ROOT", root().string()},
                    {"MGK_HOME", shared_mgk_home().string()},
                    {"MGK_HARNESS", fake("scripted-harness", bin_.path(), "scripted-harness-" + scenario).string()},
                    {"MGK_CANDIDATE", fake("scripted-candidate", bin_.path(), "scripted-candidate").string()}},
                   300);
  }
  TempDir bin_{"mgk-fakes"};
};

TEST_F(StructureCheck, AnEvaluationBelowTheStructureWorldIsCheckedThereToo) {
  CliResult r = eval("correct", "0,1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_verdict(r, "correct");
  expect_message(r, "correct too at W = 4 (the structure check, 1 size(s), not timed)");
  const auto j = r.json();
  EXPECT_TRUE(j["timed"].get<bool>()) << "the evaluation's own world is timed as before";
  ASSERT_EQ(j["structure_checks"].size(), 1u) << r.output;
  const auto& c = j["structure_checks"][0];
  EXPECT_EQ(c["world"], 4);
  EXPECT_EQ(c["gpus"], nlohmann::json({0, 1, 0, 1})) << "the evaluation's GPUs, dealt to four ranks";
  ASSERT_EQ(c["sizes"].size(), 1u);
  EXPECT_TRUE(c["sizes"][0]["correct"].get<bool>());
  EXPECT_EQ(c["sizes"][0]["trials_passed"], 2);
  EXPECT_TRUE(c["sizes"][0]["candidate"].is_null()) << "checked, never timed";
}

TEST_F(StructureCheck, AKernelWrongOnlyWhereTheStructureExistsIsIncorrect) {
  CliResult r = eval("incorrectonrank3", "0,1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const auto j = r.json();
  EXPECT_EQ(j["verdict"], "incorrect") << r.output;
  expect_message(r, "incorrect at W = 4 (the structure check, ranks sharing GPUs) at size small: output mismatch");
  expect_message(r, "because rank 3 exists only from W = 4");
  ASSERT_EQ(j["sizes"].size(), 1u);
  EXPECT_TRUE(j["sizes"][0]["correct"].get<bool>()) << "correct at its own world";
  ASSERT_EQ(j["structure_checks"].size(), 1u);
  const auto& s = j["structure_checks"][0]["sizes"][0];
  EXPECT_FALSE(s["correct"].get<bool>());
  EXPECT_EQ(s["mismatch"]["rank"], 3);
}

TEST_F(StructureCheck, AnEvaluationAtTheStructureWorldNeedsNoSecondGroup) {
  CliResult r = eval("incorrectonrank3", "0,1,0,1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const auto j = r.json();
  expect_message(r, "incorrect at size small: output mismatch");
  EXPECT_TRUE(j["structure_checks"].empty()) << r.output;
}

}  // namespace
}  // namespace mgk::test
