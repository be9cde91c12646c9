// What the bench prints while it runs, in its three styles.
#include "bench_run/progress.h"

#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

namespace mgk::bench_run {
namespace {

TEST(Progress, PlainLinesSayWhatEachAttemptCameToAndTheTotalsSoFar) {
  std::ostringstream out;
  Progress p(out, Progress::Style::kLines, "mgk bench run 3", 4, 2, {1, 1, 0, 0, 0.5});
  p.worker(0, "collectives/all_reduce #1: model call, turn 1/8");  // not shown in plain lines
  p.spent(0.75);
  p.attempt_done({"collectives/all_reduce", 1}, 12, "correct 1.42x", true, true, false, 0.25);
  p.note("error in tp/x sample 0: the judge broke");
  p.close();
  const std::string s = out.str();
  EXPECT_NE(s.find("mgk bench run 3\n1 of 4 attempts were finished before: skipped\n"), std::string::npos) << s;
  EXPECT_NE(s.find("[2/4] collectives/all_reduce sample 1: correct 1.42x (attempt 12, $0.25)  | 2/4 done  correct 2  "
                   "fast 1  $0.75"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("error in tp/x sample 0: the judge broke\n"), std::string::npos) << s;
  EXPECT_EQ(s.find("model call"), std::string::npos) << s;
  EXPECT_EQ(s.find('\x1b'), std::string::npos) << "no terminal codes in plain lines";
}

TEST(Progress, JsonLinesAreOneObjectPerEvent) {
  std::ostringstream out;
  Progress p(out, Progress::Style::kJson, "run 1", 2, 1, {});
  p.attempt_done({"a/b", 0}, 1, "wrong", false, false, false, 0.1);
  p.close();
  std::istringstream lines(out.str());
  std::vector<nlohmann::json> events;
  for (std::string line; std::getline(lines, line);) events.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["event"], "start");
  EXPECT_EQ(events[1]["event"], "attempt");
  EXPECT_EQ(events[1]["outcome"], "wrong");
  EXPECT_EQ(events[1]["done"], 1);
  EXPECT_EQ(events[2]["event"], "end");
  EXPECT_EQ(events[2]["total"], 2);
}

TEST(Progress, TheLiveDisplayRedrawsItsBlockWithOneLinePerWorker) {
  std::ostringstream out;
  Progress p(out, Progress::Style::kLive, "run 9", 3, 2, {});
  p.worker(1, "tp/x #0: waiting for 2 rank(s) of GPU");
  p.attempt_done({"tp/x", 0}, 5, "hang", false, false, false, 0);
  const std::string s = out.str();
  EXPECT_NE(s.find("  worker 2: tp/x #0: waiting for 2 rank(s) of GPU\n"), std::string::npos) << s;
  EXPECT_NE(s.find("\x1b[3F\x1b[J"), std::string::npos) << "the block (status + 2 workers) is redrawn in place";
  EXPECT_NE(s.find("[########................] 1/3 done"), std::string::npos) << s;
  EXPECT_NE(s.find("tp/x sample 0: hang (attempt 5, $0.00)\n"), std::string::npos) << s;
}

TEST(Progress, ClockFormats) {
  EXPECT_EQ(Progress::clock(65), "1m05s");
  EXPECT_EQ(Progress::clock(3 * 3600 + 120), "3h02m");
  EXPECT_EQ(Progress::clock(-1), "-");
}

}  // namespace
}  // namespace mgk::bench_run
