// What the model is told of the checks is rendered from the checks' own tables
// (eval/candidate_rules.h): every class of refusal has its text in both system prompts, no
// text is left without a class, every class is one the checks really give, and a refusal's
// feedback quotes its class with what to use instead.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "agent/feedback.h"
#include "agent/problem_prompt.h"
#include "agent/rules_prompt.h"
#include "common/env.h"
#include "common/error.h"
#include "eval/candidate_rules.h"
#include "eval/compile.h"
#include "eval/evaluate.h"
#include "eval/imports.h"
#include "eval/source_policy.h"
#include "problems/catalog.h"

namespace mgk::agent {
namespace {

namespace fs = std::filesystem;
using eval::Rule;

class RulesPrompt : public ::testing::Test {
 protected:
  PromptLibrary lib_ = PromptLibrary::load(root_dir() / "prompts");

  InitialPrompt opening(Mode mode) {
    spec_ = problems::load("collectives/all_reduce");
    PromptInputs in;
    in.spec = &spec_;
    in.texts = read_prompt_texts(spec_);
    in.topology.arch = "sm_90a";
    in.mode = mode;
    return build_initial_prompt(lib_, in);
  }
  problems::Spec spec_;
};

TEST_F(RulesPrompt, EveryClassOfRefusalIsInBothSystemPrompts) {
  for (Mode mode : {Mode::kRefine, Mode::kShell}) {
    const std::string system = opening(mode).system;
    for (const auto& r : eval::candidate_rules()) {
      const std::string text = rule_text(lib_, r.id);
      ASSERT_FALSE(text.empty()) << r.id;
      // The first line of the rule's text is in the prompt as a bullet.
      const std::string first = text.substr(0, text.find('\n'));
      EXPECT_NE(system.find("- " + first), std::string::npos) << r.id << " is not in the prompt";
    }
    EXPECT_EQ(system.find("{{"), std::string::npos);
  }
}

TEST_F(RulesPrompt, NoRuleTextIsLeftWithoutAClass) {
  std::set<std::string> ids;
  for (const auto& r : eval::candidate_rules()) EXPECT_TRUE(ids.insert(r.id).second) << "two classes named " << r.id;
  for (const auto& entry : fs::directory_iterator(root_dir() / "prompts" / "rules"))
    EXPECT_TRUE(ids.count(entry.path().stem().string()))
        << entry.path() << " names no class of eval/candidate_rules.h";
}

TEST_F(RulesPrompt, ThePromptShowsTheBuildAsTheCompilerRunsIt) {
  const std::string system = opening(Mode::kRefine).system;
  std::string flags;
  for (const auto& f : eval::nvcc_flags("sm_90a")) flags += (flags.empty() ? "" : " ") + f;
  EXPECT_NE(system.find("nvcc " + flags), std::string::npos) << "the flags the prompt shows are not compile's";
  for (const auto& lib : eval::linked_libraries(false)) EXPECT_NE(system.find(lib), std::string::npos) << lib;
  for (const auto& lib : eval::linked_libraries(true))
    if (lib.find("nccl") != std::string::npos || lib.find("cudnn") != std::string::npos)
      EXPECT_EQ(system.find(lib), std::string::npos) << lib << " is the references' alone";
  EXPECT_NE(system.find("mgk/lt_gemm.h"), std::string::npos);
  EXPECT_EQ(system.find(root_dir().string()), std::string::npos) << "a host path in the system prompt";
}

// How a preset is judged, with the evaluator's own numbers, in both system prompts: the
// trials, the back-to-back calls and their two input buffers, the hang timeout, the credit.
TEST_F(RulesPrompt, BothSystemPromptsSayHowAPresetIsJudgedWithTheEvaluatorsNumbers) {
  const eval::EvalOptions defaults;
  for (Mode mode : {Mode::kRefine, Mode::kShell}) {
    const std::string system = opening(mode).system;
    EXPECT_NE(system.find("- " + std::to_string(defaults.trials) + " trials, each on fresh random inputs"),
              std::string::npos)
        << system;
    EXPECT_NE(system.find("Then " + std::to_string(defaults.back_to_back) + " calls in a row"), std::string::npos);
    EXPECT_NE(system.find("alternate between two buffers"), std::string::npos);
    EXPECT_NE(system.find("within " + std::to_string(int(defaults.timeout_seconds)) + " s is a"), std::string::npos);
    EXPECT_NE(system.find("under the timing floor"), std::string::npos);
    EXPECT_EQ(system.find("## Rules"), system.rfind("## Rules")) << "the rules twice";
  }
}

// Each class is given by a check for some input: the prompt names no rule the evaluator
// does not enforce. (The hidden-code class is the executable-code check's; compile_test's
// AHostSyscallInstructionIsRefused asserts its id on a real build.)
TEST_F(RulesPrompt, EveryClassIsOneTheChecksGive) {
  std::map<Rule, std::string> seen;
  auto source = [&](const std::string& line) {
    const std::string text = "# 1 \"k.cu\"\n" + line + "\n";
    auto v = eval::check_preprocessed(text, {}, false);
    ASSERT_TRUE(v) << line;
    seen[v->rule] = line;
  };
  auto import = [&](const std::string& symbol) {
    eval::ElfLinkage l;
    l.needed = {"libcudart.so.13", "libc.so.6"};
    l.imports = {symbol};
    auto v = eval::check_imports(l);
    ASSERT_TRUE(v) << symbol;
    seen[v->rule] = symbol;
  };
  source("ncclAllReduce(a, b);");
  source("asm(\"multimem.ld_reduce.global.add.f32 %0, [%1];\");");
  source("dlopen(\"libcublasLt.so\", 0);");
  source("int mgk_oracle(void);");
  source("cudaDeviceReset();");
  for (const char* s : {"fork", "pthread_create", "syscall", "mprotect", "socket", "ptrace",
                        "_ZNSt14basic_ifstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode", "fopen"})
    import(s);
  eval::ElfLinkage shadowing;
  shadowing.defined = {{"cudaEventElapsedTime", true}};
  auto v = eval::shadowed_name(shadowing);
  ASSERT_TRUE(v);
  seen[v->rule] = "defines cudaEventElapsedTime";
  for (const auto& r : eval::candidate_rules())
    if (r.rule != Rule::kHiddenCode) EXPECT_TRUE(seen.count(r.rule)) << r.id << ": no check gives this class here";
}

TEST_F(RulesPrompt, ARefusalsFeedbackQuotesItsRuleAndWhatToUseInstead) {
  results::EvalResult r;
  r.verdict = results::Verdict::kCompileError;
  r.message = "refused: kernel.cu:12: 'dlopen': candidates may not load or look up code at run time";
  r.refused = true;
  r.refused_rule = "code-loading";
  EXPECT_EQ(feedback_template(r), "feedback/refused");
  const std::string text = render_feedback(lib_, r, 1, 4);
  EXPECT_NE(text.find(r.message), std::string::npos) << text;
  EXPECT_NE(text.find("mgk/lt_gemm.h"), std::string::npos) << text;
  EXPECT_NE(text.find("cuBLASLt"), std::string::npos) << text;
  EXPECT_EQ(text.find("{{"), std::string::npos) << text;
  r.refused = false;
  r.refused_rule.clear();
  EXPECT_EQ(feedback_template(r), "feedback/compile_error") << "a compile error is no refusal";
}

TEST_F(RulesPrompt, ARefusalNoRuleNamesIsStillFedBackAsARefusal) {
  results::EvalResult r;
  r.verdict = results::Verdict::kCompileError;
  r.message = "refused: kernel.cu: the built library defines a symbol mgk exports";
  r.refused = true;  // a check without a rule of the list
  EXPECT_EQ(feedback_template(r), "feedback/refused");
  const std::string text = render_feedback(lib_, r, 1, 4);
  EXPECT_NE(text.find("mgk refused your kernel before running it"), std::string::npos) << text;
  EXPECT_NE(text.find("No rule of the list names this refusal"), std::string::npos) << text;
  EXPECT_NE(text.find(r.message), std::string::npos) << text;
  EXPECT_EQ(text.find("{{"), std::string::npos) << text;
}

TEST_F(RulesPrompt, ACallTheFilterRefusedWhileRunningIsFedBackWithItsRule) {
  results::EvalResult r;
  r.verdict = results::Verdict::kRuntimeError;
  r.message = "refused: the candidate's process of rank 0 made system call 'socket' (number 41): candidates may not "
              "open sockets or network connections (during load)";
  r.refused = true;
  r.refused_rule = "sockets";
  EXPECT_EQ(feedback_template(r), "feedback/refused");
  const std::string text = render_feedback(lib_, r, 2, 4);
  EXPECT_NE(text.find("stopped while running"), std::string::npos) << text;
  EXPECT_NE(text.find("No sockets or network"), std::string::npos) << text;
  EXPECT_NE(text.find(r.message), std::string::npos) << text;
  r.refused = false;
  r.refused_rule.clear();
  EXPECT_EQ(feedback_template(r), "feedback/runtime_error");
}

// The ABI as the model needs it: the structs and the three functions, without the
// maintainer's notes or what only references use (the oracle, how inputs are generated).
TEST_F(RulesPrompt, TheAbiIsQuotedWithoutWhatOnlyMaintainersAndReferencesNeed) {
  const std::string abi = read_prompt_texts(problems::load("collectives/all_reduce")).abi;
  for (const char* needed : {"mgk_setup", "mgk_run", "mgk_teardown", "struct mgk_ctx", "sym_alloc", "host_barrier",
                             "typedef struct mgk_tensor", "peers", "MGK_MAX_RANK_DIMS", "mgk/dtype.h"})
    EXPECT_NE(abi.find(needed), std::string::npos) << needed;
  for (const char* cut : {"mgk_oracle", "mgk_input_gen", "Bump MGK_ABI_VERSION", "mgk-prompt", "#pragma once",
                          "mgk_setup_fn"})
    EXPECT_EQ(abi.find(cut), std::string::npos) << cut;
  EXPECT_EQ(abi.find("\n\n\n"), std::string::npos) << "a cut left a run of blank lines";
}

TEST_F(RulesPrompt, OmitMarkersThatDoNotPairUpAreTheMaintainersErrorNamingTheLine) {
  EXPECT_EQ(for_the_model("a\n// mgk-prompt: omit {\nb\n// mgk-prompt: omit }\nc\n", "h.h"), "a\nc\n");
  auto message = [](const std::string& text) {
    try {
      for_the_model(text, "h.h");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("// mgk-prompt: omit {\nx\n").find("h.h:1: 'mgk-prompt: omit {' is never closed"), std::string::npos);
  EXPECT_NE(message("x\n// mgk-prompt: omit }\n").find("h.h:2:"), std::string::npos);
  EXPECT_NE(message("// mgk-prompt: omit {\n// mgk-prompt: omit {\n").find("inside another (line 1)"),
            std::string::npos);
}

}  // namespace
}  // namespace mgk::agent
