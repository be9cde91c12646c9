// The real prompt files: they load, carry a version, and every template renders with the
// variables the code gives it (a renamed variable fails here, not in front of a model).
#include <gtest/gtest.h>

#include "agent/feedback.h"
#include "agent/problem_prompt.h"
#include "agent/prompt_library.h"
#include "common/env.h"
#include "common/error.h"
#include "common/file.h"
#include "problems/catalog.h"
#include "problems/spec.h"

namespace mgk::agent {
namespace {

problems::Spec sample_spec() {
  nlohmann::json j = nlohmann::json::parse(R"json({
    "title": "All-reduce (sum)",
    "dtypes": ["bf16", "f32"],
    "sizes": [{"name": "small", "dims": {"N": "2**20 / W"}},
              {"name": "large", "dims": {"N": "2**27 / W"}}],
    "inputs": [{"name": "x", "shape": ["N"], "symmetric": true,
                "init": {"dist": "normal", "mean": 0, "std": 1},
                "description": "this rank's contribution"}],
    "outputs": [{"name": "y", "shape": ["N"], "symmetric": true,
                 "tolerance": {"kind": "rounding", "factor": "W + 1"},
                 "description": "the sum over ranks"}],
    "cost": {"link_bytes": "2*(W-1)*N*ELT/W"}
  })json");
  return problems::parse_spec(j, "collectives/all_reduce", "/nonexistent");
}

PromptInputs sample_inputs(const problems::Spec& spec, Mode mode) {
  PromptInputs in;
  in.spec = &spec;
  in.world_size = 2;
  in.topology = {2, "NVIDIA H200", 132, 362.0, "mgk calibrate, 2026-11-29"};
  in.texts = {"typedef struct mgk_ctx mgk_ctx; /* ABI-TEXT */",
              "# Primitives GUIDE-TEXT", "Sum x over all ranks. STATEMENT-TEXT",
              "MGK_EXPORT int mgk_run(...) { /* REFERENCE-TEXT */ }"};
  in.mode = mode;
  in.max_turns = 6;
  in.eval_command = "mgk eval collectives/all_reduce kernel.cu --world 2";
  in.tune_command = "mgk tune collectives/all_reduce kernel.cu --world 2";
  in.problem_dir = "/opt/mgk/problems/collectives/all_reduce";
  in.primitives_dir = "/opt/mgk/primitives";
  return in;
}

class Prompts : public ::testing::Test {
 protected:
  PromptLibrary lib_ = PromptLibrary::load(root_dir() / "prompts");
};

TEST_F(Prompts, HaveAVersion) { EXPECT_FALSE(lib_.version().empty()); }

// A reference that keeps its code in a header beside the problems is shown with it: the
// model reads the reference as the baseline to beat. Each such header once; mgk/ headers
// (on the include path, quoted in the prompt already) are not pasted.
TEST_F(Prompts, TheReferenceComesWithTheSuiteHeadersItIncludes) {
  const problems::Spec spec = problems::load("dp/ddp");
  const PromptTexts t = read_prompt_texts(spec);
  const std::string reference = read_file(spec.reference_path());
  ASSERT_NE(reference.find("#include \"../dp_mlp.cuh\""), std::string::npos) << "the test's premise changed";
  EXPECT_EQ(t.reference_source.rfind(reference, 0), 0u);
  const std::string marker = "// ---- problems/dp/dp_mlp.cuh (included above) ----";
  const size_t at = t.reference_source.find(marker);
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(t.reference_source.find(marker, at + 1), std::string::npos);
  EXPECT_NE(t.reference_source.find(read_file(problems::problems_dir() / "dp" / "dp_mlp.cuh")), std::string::npos);
  EXPECT_EQ(t.reference_source.find("// ---- problems/../"), std::string::npos);
  EXPECT_EQ(t.reference_source.find("mgk/lt_gemm.h (included above)"), std::string::npos);
}

TEST_F(Prompts, TheRefineOpeningCarriesEverythingTheModelNeeds) {
  problems::Spec spec = sample_spec();
  InitialPrompt p = build_initial_prompt(lib_, sample_inputs(spec, Mode::kRefine));
  for (const char* s : {"ABI-TEXT", "GUIDE-TEXT", "NVIDIA H200", "132 SMs", "362 GB/s", "6 turns",
                        "Copy engine", "TMA", "Register-level", "Intra-SM", "Inter-SM", "epoch",
                        "mgk:tune", "```cuda"})
    EXPECT_NE(p.system.find(s), std::string::npos) << s;
  for (const char* s : {"collectives/all_reduce", "STATEMENT-TEXT", "REFERENCE-TEXT", "`x`", "`y`",
                        "normal(0, 1)", "small: N = 524288", "large: N = 67108864", "W + 1",
                        "Write your kernel file."})
    EXPECT_NE(p.user.find(s), std::string::npos) << s << "\n" << p.user;
  EXPECT_EQ(p.system.find("{{"), std::string::npos);
  EXPECT_EQ(p.user.find("{{"), std::string::npos);
}

// A problem checked at a larger world too (problems::StructureCheck) says so, and why, at a
// world below it; at that world the section is gone.
TEST_F(Prompts, TheModelIsToldOfTheWorldsItsKernelIsAlsoCheckedAt) {
  problems::Spec spec = sample_spec();
  spec.structure_check = {{4, 8}, "the DP group has one member at W = 2"};
  PromptInputs in = sample_inputs(spec, Mode::kRefine);
  const std::string at2 = render_problem(lib_, in);
  EXPECT_NE(at2.find("## Worlds checked"), std::string::npos) << at2;
  EXPECT_NE(at2.find("timed at W = 2, and also checked (not timed) at W = 4, 8"), std::string::npos) << at2;
  EXPECT_NE(at2.find("because the DP group has one member at W = 2"), std::string::npos) << at2;
  in.world_size = 4;
  EXPECT_NE(render_problem(lib_, in).find("also checked (not timed) at W = 8,"), std::string::npos);
  in.world_size = 8;
  EXPECT_EQ(render_problem(lib_, in).find("Worlds checked"), std::string::npos);
  EXPECT_EQ(render_problem(lib_, sample_inputs(sample_spec(), Mode::kRefine)).find("Worlds checked"), std::string::npos);
}

// The special rows of an input are in the prompt: a model told of the massive tokens knows
// its exp needs the max.
TEST_F(Prompts, TheSpecialRowsOfAnInputAreDescribed) {
  problems::Spec spec = sample_spec();
  spec.inputs[0].init.row_length = "N";
  spec.inputs[0].init.zero_every = 16;
  spec.inputs[0].init.massive_every = 32;
  spec.inputs[0].init.massive = 128;
  const std::string text = render_problem(lib_, sample_inputs(spec, Mode::kRefine));
  EXPECT_NE(text.find("normal(0, 1); every 16th row (of N) all zero; every 32nd row (of N) times 128 "
                      "(the same rows on every rank, drawn afresh each call)"),
            std::string::npos)
      << text;
}

// A kernel wrong only at the structure check's world hears which world and size failed.
TEST_F(Prompts, AFailureAtTheStructureCheckNamesItsWorld) {
  results::EvalResult r;
  r.verdict = results::Verdict::kIncorrect;
  r.world_size = 2;
  r.message = "incorrect at W = 4 (the structure check, ranks sharing GPUs) at size pkb: output mismatch";
  results::SizeResult ok;
  ok.size = "pkb";
  ok.correct = true;
  r.sizes = {ok};
  results::SizeResult bad;
  bad.size = "pkb";
  bad.failure = "output mismatch";
  bad.mismatch = wire::Mismatch{"y", 3, "[5]", 5, 1.0, 2.0, 0, 1, 64};
  r.structure_checks = {{4, {0, 0, 0, 0}, {bad}}};
  const std::string report = feedback_vars(lib_, r, 1, 6).at("report");
  EXPECT_NE(report.find("- W = 2, size pkb: correct"), std::string::npos) << report;
  EXPECT_NE(report.find("- W = 4 (ranks sharing GPUs), size pkb: output mismatch"), std::string::npos) << report;
  EXPECT_NE(report.find("rank 3"), std::string::npos) << report;
}

TEST_F(Prompts, TheShellOpeningExplainsTheToolsAndTheSentinel) {
  problems::Spec spec = sample_spec();
  InitialPrompt p = build_initial_prompt(lib_, sample_inputs(spec, Mode::kShell));
  for (const char* s : {"mgk eval collectives/all_reduce kernel.cu --world 2", "mgk tune", "MGK_SUBMIT",
                        "```bash", "at most 6 commands", "/opt/mgk/primitives"})
    EXPECT_NE(p.system.find(s), std::string::npos) << s;
  EXPECT_NE(p.user.find("reference.cu"), std::string::npos);
}

TEST_F(Prompts, EveryFeedbackTemplateRendersFromAVerdict) {
  results::EvalResult r;
  r.message = "one line";
  r.compile_log = "kernel.cu(3): error: expected a \";\"";
  results::SizeResult s;
  s.size = "small";
  s.correct = true;
  s.reference = results::Timing{21.7, 21, 23, 20.5, 100, {21.7, 21.5}};
  s.candidate = results::Timing{10.9, 10.5, 11.5, 10.2, 100, {10.9, 10.1}};
  s.speedup = 21.7 / 10.9;
  s.roofline_fraction = 0.42;
  s.roofline_us = 4.6;
  s.roofline_bound = "link";
  r.sizes.push_back(s);
  for (auto v : {results::Verdict::kCorrect, results::Verdict::kIncorrect, results::Verdict::kCompileError,
                 results::Verdict::kRuntimeError, results::Verdict::kTimeout, results::Verdict::kInfrastructure,
                 results::Verdict::kCompiled}) {
    r.verdict = v;
    std::string text = render_feedback(lib_, r, 3, 8);
    EXPECT_NE(text.find("Turn 3 of 8"), std::string::npos) << feedback_template(r);
    EXPECT_EQ(text.find("{{"), std::string::npos) << feedback_template(r);
  }
  for (const char* name : {"feedback/format_error", "feedback/truncated", "feedback/limits_reached"})
    for (const char* shell : {"", "1"})
      EXPECT_NO_THROW(lib_.render(name, {{"reason", "r"}, {"shell_mode", shell}, {"max_tokens", "100"},
                                         {"submit_sentinel", kSubmitSentinel}}))
          << name;
  EXPECT_NO_THROW(lib_.render("feedback/shell_observation", {{"status", "exit 0"}, {"output", ""}}));
}

TEST_F(Prompts, ACorrectKernelNobodyTimedIsToldSoPlainly) {
  results::EvalResult r;
  r.verdict = results::Verdict::kCorrect;
  r.world_size = 4;
  for (const char* size : {"small", "odd"}) {
    results::SizeResult s;
    s.size = size;
    s.correct = true;
    s.trials_passed = 3;
    r.sizes.push_back(s);  // no timings: the ranks shared a GPU
  }
  EXPECT_EQ(feedback_template(r), "feedback/correct_untimed");
  const std::string text = render_feedback(lib_, r, 2, 8);
  for (const char* part : {"Turn 2 of 8", "correct at every size (small, odd)", "nothing\nwas timed",
                           "The 4 ranks share one GPU here", "no\nspeedup, no roofline fraction and no time"})
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  EXPECT_EQ(text.find("0.00"), std::string::npos) << "no made-up speedup: " << text;
  EXPECT_EQ(verdict_summary(r), "correct (not timed)");
}

TEST_F(Prompts, ACompileOnlyVerdictSaysNothingRan) {
  results::EvalResult r;
  r.verdict = results::Verdict::kCompiled;
  r.message = "compiled in 1.4 s";
  EXPECT_EQ(feedback_template(r), "feedback/compiled");
  const std::string text = render_feedback(lib_, r, 1, 2);
  EXPECT_NE(text.find("your kernel compiled (compiled in 1.4 s)"), std::string::npos) << text;
  EXPECT_NE(text.find("it was not run, checked or timed"), std::string::npos) << text;
}

TEST_F(Prompts, AnUnknownTemplateListsTheKnownOnes) {
  try {
    lib_.render("feedback/nope", {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("feedback/mismatch"), std::string::npos) << e.what();
  }
}

TEST_F(Prompts, AMissingVariableInARealTemplateIsCaught) {
  try {
    lib_.render("feedback/compile_error", {{"turn", "1"}, {"max_turns", "2"}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("feedback/compile_error.md"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'compile_log'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mgk::agent
