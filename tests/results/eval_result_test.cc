// The one definition of a kernel's speedup and of a time that is not credible, the refusal as
// a field, and the first wrong element typed: what the store, the report and the agent read.
#include "results/eval_result.h"

#include <gtest/gtest.h>

namespace mgk::results {
namespace {

SizeResult timed(const std::string& size, double ref_us, double cand_us) {
  SizeResult s;
  s.size = size;
  s.correct = true;
  s.reference = Timing{ref_us, ref_us, ref_us, ref_us, 100, {ref_us}};
  s.candidate = Timing{cand_us, cand_us, cand_us, cand_us, 100, {cand_us}};
  s.speedup = ref_us / cand_us;
  return s;
}

EvalResult correct(std::vector<SizeResult> sizes) {
  EvalResult r;
  r.verdict = Verdict::kCorrect;
  r.sizes = std::move(sizes);
  return r;
}

TEST(EvalResult, TheKernelsSpeedupIsItsSlowestSizes) {
  const EvalResult r = correct({timed("small", 20, 10), timed("large", 800, 1000)});
  EXPECT_DOUBLE_EQ(*r.speedup(), 0.8);
  EXPECT_EQ(r.speedups(), (std::vector<double>{2.0, 0.8}));
  EXPECT_TRUE(r.credible());
  EvalResult wrong = r;
  wrong.verdict = Verdict::kIncorrect;
  EXPECT_FALSE(wrong.speedup()) << "only a correct kernel has a speedup";
}

TEST(EvalResult, ATimeUnderTheFloorOrAnUntimedSizeGivesNoSpeedupNotZero) {
  SizeResult under = timed("small", 20, 2);
  under.credible = false;
  under.speedup = 0;
  const EvalResult fooled = correct({under, timed("large", 800, 400)});
  EXPECT_FALSE(fooled.credible());
  EXPECT_FALSE(fooled.speedup()) << "one fooled clock: the kernel has no speedup";
  EXPECT_TRUE(fooled.speedups().empty());
  EXPECT_FALSE(under.credited_speedup());

  SizeResult checked = timed("small", 20, 10);
  checked.candidate.reset();  // ranks sharing a GPU: checked, never timed
  checked.speedup = 0;
  const EvalResult untimed = correct({checked});
  EXPECT_TRUE(untimed.credible()) << "nothing timed fooled nothing";
  EXPECT_FALSE(untimed.speedup()) << "not timed is not a speedup of 0";
  EXPECT_FALSE(correct({}).speedup());
}

// (Results stored before the refusal was a field are rewritten by the store's migration:
// tests/store/migrations_test.cc.)
TEST(EvalResult, TheRefusalIsAField) {
  EvalResult r;
  r.verdict = Verdict::kRuntimeError;
  r.refused = true;
  r.message = "at W = 4 (the structure check, ranks sharing GPUs): refused: the candidate's process made ptrace";
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j["schema_version"], 2);
  EXPECT_TRUE(EvalResult::from_json(j).refused) << "a refusal whose message does not begin with the word";
  r.refused = false;
  r.message = "refused: a message that only looks like a refusal";
  EXPECT_FALSE(EvalResult::from_json(r.to_json()).refused) << "the field decides, not the message";
}

TEST(EvalResult, TheFirstWrongElementIsTypedAndSaidOneWay) {
  EvalResult r;
  r.verdict = Verdict::kIncorrect;
  SizeResult bad;
  bad.size = "odd";
  bad.mismatch = wire::Mismatch{"y", 1, "[3, 17]", 71, std::nullopt, 1.25, 0.02, 3, 1024};
  r.sizes = {bad};
  const EvalResult back = EvalResult::from_json(r.to_json());
  ASSERT_TRUE(back.sizes[0].mismatch);
  EXPECT_EQ(back.sizes[0].mismatch->index, "[3, 17]");
  EXPECT_FALSE(back.sizes[0].mismatch->got) << "NaN travels as null";
  EXPECT_EQ(describe(*back.sizes[0].mismatch),
            "output 'y' rank 1 index [3, 17]: got nan, expected 1.25 (allowed error 0.02); 3 of 1024 elements wrong");
  nlohmann::json odd = r.to_json();
  odd["sizes"][0]["mismatch"] = {{"output", 7}};  // not the protocol's shape: left out, not fatal
  EXPECT_FALSE(EvalResult::from_json(odd).sizes[0].mismatch);
}

}  // namespace
}  // namespace mgk::results
