// The agent's names and its one mapping from why a session ended to the stored status.
#include "agent/config.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace mgk::agent {
namespace {

TEST(AgentConfig, ActionsAreStoredUnderTheirWords) {
  EXPECT_STREQ(to_string(Action::kKernel), "kernel");
  EXPECT_STREQ(to_string(Action::kShell), "shell");
  EXPECT_STREQ(to_string(Action::kSubmit), "submit");
  EXPECT_STREQ(to_string(Action::kFormatError), "format_error");
  EXPECT_STREQ(to_string(Action::kTruncated), "truncated");
}

TEST(AgentConfig, AnInterruptedSessionIsResumableAFailedOneSaysSoTheRestAreDone) {
  EXPECT_EQ(status_of(ExitReason::kInterrupted), store::Status::kInterrupted);
  EXPECT_EQ(status_of(ExitReason::kApiError), store::Status::kFailed);
  EXPECT_EQ(status_of(ExitReason::kInfrastructure), store::Status::kFailed);
  for (ExitReason r : {ExitReason::kSubmitted, ExitReason::kTurnsExhausted, ExitReason::kCostLimit,
                       ExitReason::kTimeLimit, ExitReason::kFormatErrors})
    EXPECT_EQ(status_of(r), store::Status::kDone) << to_string(r);
}

TEST(AgentConfig, TheDefaultsAreWrittenOnce) {
  EXPECT_EQ(default_turns(Mode::kRefine), Limits{}.turns);
  EXPECT_EQ(default_turns(Mode::kShell), kShellSteps);
  EXPECT_EQ(Sampling{}.max_tokens, llm::Request{}.max_tokens);
  EXPECT_EQ(mode_from_string("shell"), Mode::kShell);
  EXPECT_THROW(mode_from_string("chat"), UsageError);
}

}  // namespace
}  // namespace mgk::agent
