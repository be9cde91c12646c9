// The queries and text behind `mgk history` and `mgk show`.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <sstream>

#include "common/error.h"
#include "sample_data.h"
#include "store/attempt_view.h"
#include "store/database.h"
#include "store/history_table.h"
#include "store/records_json.h"
#include "store/statement.h"
#include "store/store.h"
#include "store/timestamp.h"
#include "support/test_paths.h"

namespace mgk::store {
namespace {

class HistoryTest : public ::testing::Test {
 protected:
  mgk::test::TempDir dir{"mgk-history"};
  Store store = Store::open(dir.path() / "mgk.db");
  std::map<std::string, int64_t> ids;

  // Four attempts on known days (the store stamps "now"; the test moves them in time).
  void SetUp() override {
    ids["ar"] = test::record_sample_attempt(store, "collectives/all_reduce", "anthropic:claude-a");
    ids["ag"] = test::record_sample_attempt(store, "tp/ag_gemm", "openai:gpt-b");
    ids["rs"] = test::record_sample_attempt(store, "tp/gemm_rs", "anthropic:claude-a");
    int64_t run = store.begin_run({"generate", "openai:gpt-b", {}});
    ids["open"] = store.begin_attempt(
        test::attempt_start(run, "collectives/all_reduce", "openai:gpt-b", "shell"));
    Database db = Database::open(store.path());
    set_started(db, ids["ar"], "2026-01-03T10:00:00.000Z");
    set_started(db, ids["ag"], "2026-01-04T23:59:59.500Z");
    set_started(db, ids["rs"], "2026-01-05T00:00:00.000Z");
    set_started(db, ids["open"], "2026-01-06T08:30:00.000Z");
  }

  static void set_started(Database& db, int64_t id, const std::string& when) {
    Statement s(db, "UPDATE attempts SET started_at = ? WHERE id = ?");
    s.bind(1, when).bind(2, id);
    s.run();
  }

  std::vector<int64_t> found(const HistoryFilter& f) {
    std::vector<int64_t> out;
    for (const auto& a : store.history(f)) out.push_back(a.id);
    return out;
  }
};

// A filter with the fields `set` gives, the rest unset (designated initializers would
// warn under -Wextra about the fields they leave out).
HistoryFilter where(const std::function<void(HistoryFilter&)>& set) {
  HistoryFilter f;
  set(f);
  return f;
}

TEST_F(HistoryTest, NewestFirstWithLimit) {
  EXPECT_EQ(found({}), (std::vector<int64_t>{ids["open"], ids["rs"], ids["ag"], ids["ar"]}));
  EXPECT_EQ(found(where([](auto& f) { f.limit = 2; })),
            (std::vector<int64_t>{ids["open"], ids["rs"]}));
  EXPECT_EQ(found(where([](auto& f) { f.limit = 0; })).size(), 4u);
}

TEST_F(HistoryTest, FiltersByProblemGlobModelAndStatus) {
  EXPECT_EQ(found(where([](auto& f) { f.problem = "tp/*"; })),
            (std::vector<int64_t>{ids["rs"], ids["ag"]}));
  EXPECT_EQ(found(where([](auto& f) { f.problem = "collectives/all_reduce"; })),
            (std::vector<int64_t>{ids["open"], ids["ar"]}));
  EXPECT_EQ(found(where([](auto& f) { f.model = "anthropic:*"; })),
            (std::vector<int64_t>{ids["rs"], ids["ar"]}));
  EXPECT_EQ(found(where([](auto& f) {
              f.problem = "tp/*";
              f.model = "openai:gpt-b";
            })),
            (std::vector<int64_t>{ids["ag"]}));
  EXPECT_EQ(found(where([](auto& f) { f.status = Status::kRunning; })),
            (std::vector<int64_t>{ids["open"]}));
  EXPECT_EQ(found(where([](auto& f) { f.status = Status::kFailed; })), (std::vector<int64_t>{}));
  int64_t run = store.attempt(ids["ag"])->run_id;
  EXPECT_EQ(found(where([&](auto& f) { f.run_id = run; })), (std::vector<int64_t>{ids["ag"]}));
}

TEST_F(HistoryTest, FiltersByDayInclusive) {
  HistoryFilter day;
  day.since = timestamp_bound("2026-01-04", false);
  day.until = timestamp_bound("2026-01-04", true);
  EXPECT_EQ(found(day), (std::vector<int64_t>{ids["ag"]}));  // 23:59:59.5 is still that day

  HistoryFilter from5;
  from5.since = timestamp_bound("2026-01-05", false);
  EXPECT_EQ(found(from5), (std::vector<int64_t>{ids["open"], ids["rs"]}));

  HistoryFilter until_morning;
  until_morning.until = timestamp_bound("2026-01-06T08:29", true);
  EXPECT_EQ(found(until_morning), (std::vector<int64_t>{ids["rs"], ids["ag"], ids["ar"]}));
}

TEST(TimestampBound, AcceptedFormsAndErrors) {
  EXPECT_EQ(timestamp_bound("2026-01-04", false), "2026-01-04T00:00:00.000Z");
  EXPECT_EQ(timestamp_bound("2026-01-04", true), "2026-01-04T23:59:59.999Z");
  EXPECT_EQ(timestamp_bound("2026-01-04 12:30", true), "2026-01-04T12:30:59.999Z");
  EXPECT_EQ(timestamp_bound("2026-01-04T12:30:15", false), "2026-01-04T12:30:15.000Z");
  EXPECT_THROW(timestamp_bound("yesterday", false), UsageError);
  EXPECT_THROW(timestamp_bound("2026-13-01", false), UsageError);
  EXPECT_EQ(utc_now().size(), 24u);
  EXPECT_EQ(short_time("2026-01-04T12:30:15.000Z"), "2026-01-04 12:30");
}

TEST_F(HistoryTest, TableHasOneAlignedLinePerAttempt) {
  std::string table = render_history_table(store.history({}));
  std::vector<std::string> lines;
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].find("ID"), lines[0].find_first_not_of(' '));
  for (const char* column :
       {"WHEN (UTC)", "PROBLEM", "MODEL", "MODE", "STATUS", "TURNS", "BEST", "COST"})
    EXPECT_NE(lines[0].find(column), std::string::npos) << column;
  // Newest first: the open shell attempt, no turns, no best kernel.
  EXPECT_NE(lines[1].find("2026-01-06 08:30"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("running"), std::string::npos);
  EXPECT_NE(lines[1].find("shell"), std::string::npos);
  EXPECT_EQ(lines[1].back(), '0');  // "$0"
  // A finished attempt: status with exit reason, 2 turns, best 1.50x, cost $0.02.
  EXPECT_NE(lines[2].find("done (turns_exhausted)"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("1.50x"), std::string::npos);
  EXPECT_NE(lines[2].find("$0.02"), std::string::npos);
  // Columns line up: every line has "MODEL" column content starting at the same offset.
  size_t model_col = lines[0].find("MODEL");
  EXPECT_EQ(lines[2].substr(model_col, 18), "anthropic:claude-a");
  EXPECT_EQ(render_history_table(std::vector<AttemptSummary>{}), "nothing matches\n");
}

TEST(Formatting, CostAndSpeedup) {
  EXPECT_EQ(format_cost(0), "$0");
  EXPECT_EQ(format_cost(0.0031), "$0.0031");
  EXPECT_EQ(format_cost(12.345), "$12.35");
  EXPECT_EQ(format_speedup(std::nullopt), "-");
  EXPECT_EQ(format_speedup(1.8449), "1.84x");
}

TEST_F(HistoryTest, ShowTextHasPromptsRepliesEvaluationsAndTheKernel) {
  auto detail = store.attempt_detail(ids["ar"]);
  ASSERT_TRUE(detail);
  std::string text = render_attempt(*detail);
  for (const char* expected :
       {"collectives/all_reduce with anthropic:claude-a, refine mode", "done (turns_exhausted)",
        "== turn 1: kernel, finish stop", "[system]\nYou write multi-GPU kernels.",
        "Turn 1: write all_reduce.", "-- reply --\n```cuda\n// kernel 0",
        "verdict incorrect: output mismatched", "failure (small): output y mismatched on rank 1",
        "first mismatch (small): output 'y' rank 1 index [17]: got 3.5, expected 2.25 "
        "(allowed error 0.01); 40 of 4096 elements wrong",
        "verdict correct: all sizes matched", "speedup 1.50x min, 1.75x median, 2.00x max",
        "per-rank candidate medians", "-- feedback --\ncompiled; speedup 1.2x", "== best kernel ",
        "// right kernel for collectives/all_reduce"})
    EXPECT_NE(text.find(expected), std::string::npos) << "missing: " << expected << "\n" << text;
  // Per-rank medians of the correct evaluation's small size: 100/1.5 - 1 and 100/1.5.
  EXPECT_NE(text.find("65.7 66.7"), std::string::npos) << text;
}

TEST(AttemptView, OnlyNewMessagesOfALaterTurnArePrinted) {
  AttemptDetail d;
  d.attempt.id = 1;
  TurnRecord t0;
  t0.index = 0;
  t0.messages = {{{"role", "system"}, {"content", "SYSTEM PROMPT"}},
                 {{"role", "user"}, {"content", "FIRST TASK"}}};
  t0.reply = "FIRST REPLY";
  TurnRecord t1 = t0;
  t1.index = 1;
  t1.messages.push_back({{"role", "assistant"}, {"content", "FIRST REPLY"}});
  t1.messages.push_back({{"role", "user"}, {"content", "COMPILER SAID NO"}});
  t1.reply = "SECOND REPLY";
  d.turns = {t0, t1};
  std::string text = render_attempt(d);
  auto count = [&](const std::string& s) {
    size_t n = 0;
    for (size_t p = text.find(s); p != std::string::npos; p = text.find(s, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("SYSTEM PROMPT"), 1u);
  EXPECT_EQ(count("FIRST REPLY"), 1u);
  EXPECT_EQ(count("COMPILER SAID NO"), 1u);
  EXPECT_NE(text.find("-- prompt (new messages) --\n[user]\nCOMPILER SAID NO"), std::string::npos)
      << text;
}

TEST(AttemptView, FeedbackStoredAgainAsTheNextMessageIsPrintedOnce) {
  // The agent's way: each turn stores only the messages it added to the conversation.
  AttemptDetail d;
  TurnRecord t0;
  t0.index = 0;
  t0.messages = {{{"role", "system"}, {"content", "SYSTEM PROMPT"}},
                 {{"role", "user"}, {"content", "FIRST TASK"}}};
  t0.reply = "FIRST REPLY";
  t0.feedback = "FEEDBACK ONE";
  TurnRecord t1;
  t1.index = 1;
  t1.messages = {{{"role", "user"}, {"content", "FEEDBACK ONE"}}};
  t1.reply = "SECOND REPLY";
  TurnRecord t2;
  t2.index = 2;
  t2.messages = {{{"role", "user"}, {"content", "A NOTE FROM THE USER"}}};
  d.turns = {t0, t1, t2};
  std::string text = render_attempt(d);
  size_t first = text.find("FEEDBACK ONE");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(text.find("FEEDBACK ONE", first + 1), std::string::npos) << text;
  EXPECT_NE(text.find("-- prompt --\n[user]\nA NOTE FROM THE USER"), std::string::npos) << text;
}

TEST(AttemptView, CompileLogAndLooseEvaluationsShow) {
  AttemptDetail d;
  EvaluationRecord e =
      EvaluationRecord::from_result(test::eval_result("compile_error", {}), "abcdef0123456789");
  e.id = 9;
  e.turn_index = 4;  // its turn was never stored
  d.evaluations = {e};
  std::string text = render_attempt(d);
  EXPECT_NE(text.find("-- evaluation 9 (kernel abcdef012345) --"), std::string::npos) << text;
  EXPECT_NE(text.find("-- compile log --\nkernel.cu(3): error: expected ';'"), std::string::npos)
      << text;
  EXPECT_NE(text.find("no correct kernel"), std::string::npos);
}

TEST(AttemptView, AbsentTimingsAndNullsRender) {
  // A runtime error: sizes ran but were not timed, so the timings are null.
  nlohmann::json result = test::eval_result("runtime_error", {1.0});
  result["phase"] = "correctness trial 1";
  for (auto& size : result["sizes"]) {
    size["reference"] = nullptr;
    size["candidate"] = nullptr;
    size["roofline_fraction"] = nullptr;
    size["mismatch"] = nullptr;
    size["speedup"] = 0;
  }
  EvaluationRecord e = EvaluationRecord::from_result(result, "k");
  EXPECT_FALSE(e.speedup_min);
  std::string text = render_evaluation(e);
  EXPECT_NE(text.find("verdict runtime_error"), std::string::npos) << text;
  EXPECT_NE(text.find("phase correctness trial 1"), std::string::npos) << text;
  EXPECT_NE(text.find("small        no       1       -             -             -"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("first mismatch"), std::string::npos) << text;
}

TEST_F(HistoryTest, DetailJsonHoldsEverything) {
  nlohmann::json j = *store.attempt_detail(ids["ag"]);
  EXPECT_EQ(j["attempt"]["problem"], "tp/ag_gemm");
  EXPECT_EQ(j["attempt"]["status"], "done");
  EXPECT_EQ(j["attempt"]["best_speedup"], 1.5);
  EXPECT_EQ(j["turns"].size(), 2u);
  EXPECT_EQ(j["turns"][1]["messages"][0]["role"], "system");
  EXPECT_EQ(j["evaluations"].size(), 2u);
  EXPECT_EQ(j["evaluations"][1]["result"]["sizes"][1]["speedup"], 2.0);
  EXPECT_EQ(j["best_kernel"]["source"], "// right kernel for tp/ag_gemm\n");
  nlohmann::json open = *store.attempt_detail(ids["open"]);
  EXPECT_TRUE(open["best_kernel"].is_null());
  EXPECT_TRUE(open["attempt"]["ended_at"].is_null());
}

}  // namespace
}  // namespace mgk::store
