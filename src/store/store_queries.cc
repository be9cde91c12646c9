// Store: the read side (history, show, resume).
#include "common/error.h"
#include "common/name_patterns.h"
#include "store/rows.h"
#include "store/statement.h"
#include "store/store.h"

namespace mgk::store {

std::optional<RunRecord> Store::run(int64_t run_id) {
  std::lock_guard lock(*mutex_);
  Statement s(db_, std::string("SELECT ") + rows::kRunColumns + " FROM runs r WHERE r.id = ?");
  s.bind(1, run_id);
  if (!s.step()) return std::nullopt;
  return rows::read_run(s);
}

namespace {

// The kinds filter as SQL: "" for none, else " AND <column> IN ('eval', ...)" (names checked).
std::string kinds_clause(const std::vector<std::string>& kinds, const char* column) {
  if (kinds.empty()) return "";
  std::string list;
  for (const auto& k : kinds) {
    check_run_kind(k);
    list += (list.empty() ? "'" : ", '") + k + "'";
  }
  return std::string(" AND ") + column + " IN (" + list + ")";
}

// The problem filter as SQL: "" for none, else " AND (<column> GLOB ? OR ...)" with one pair
// of parameters per pattern (common/name_patterns.h: the whole name, or the name without
// its category), bound from 7 on by bind_problems.
std::string problems_clause(const std::optional<std::string>& problems, const std::string& column) {
  if (!problems) return "";
  std::string any;
  int at = 7;
  for (size_t i = 0; i < NamePatterns::parse({*problems}).patterns.size(); ++i, at += 2)
    any += (any.empty() ? "" : " OR ") + column + " GLOB ?" + std::to_string(at) + " OR " + column + " GLOB '*/' || ?" +
           std::to_string(at + 1);
  return any.empty() ? "" : " AND (" + any + ")";
}

void bind_problems(Statement& s, const std::optional<std::string>& problems) {
  if (!problems) return;
  int at = 7;
  for (const std::string& p : NamePatterns::parse({*problems}).patterns) {
    s.bind(at, p).bind(at + 1, p);
    at += 2;
  }
}

}  // namespace

std::vector<AttemptSummary> Store::history(const HistoryFilter& f) {
  std::lock_guard lock(*mutex_);
  std::string sql = std::string("SELECT ") + rows::kAttemptColumns +
                    " FROM attempts a WHERE (?2 IS NULL OR a.model GLOB ?2) AND (?3 IS NULL OR a.status = ?3) "
                    "AND (?4 IS NULL OR a.started_at >= ?4) "
                    "AND (?5 IS NULL OR a.started_at <= ?5) AND (?6 IS NULL OR a.run_id = ?6)" +
                    problems_clause(f.problem, "a.problem") + kinds_clause(f.kinds, "(SELECT r.kind FROM runs r WHERE r.id = a.run_id)") +
                    " ORDER BY a.started_at DESC, a.id DESC";
  if (f.limit > 0) sql += " LIMIT " + std::to_string(f.limit);
  Statement s(db_, sql);
  s.bind(2, f.model);  // ?1 is unused: the problems are ?7 on
  if (f.status) s.bind(3, to_string(*f.status));
  s.bind(4, f.since).bind(5, f.until).bind(6, f.run_id);
  bind_problems(s, f.problem);
  std::vector<AttemptSummary> out;
  while (s.step()) out.push_back(rows::read_attempt(s));
  return out;
}

std::vector<RunRecord> Store::runs_without_attempts(const HistoryFilter& f) {
  std::lock_guard lock(*mutex_);
  std::string sql = std::string("SELECT ") + rows::kRunColumns +
                    " FROM runs r WHERE NOT EXISTS (SELECT 1 FROM attempts a WHERE a.run_id = r.id) "
                    "AND (?2 IS NULL OR r.model GLOB ?2) AND (?3 IS NULL OR r.status = ?3) "
                    "AND (?4 IS NULL OR r.created_at >= ?4) "
                    "AND (?5 IS NULL OR r.created_at <= ?5) AND (?6 IS NULL OR r.id = ?6)" +
                    problems_clause(f.problem, "json_extract(r.args, '$.problem')") + kinds_clause(f.kinds, "r.kind") + " ORDER BY r.created_at DESC, r.id DESC";
  if (f.limit > 0) sql += " LIMIT " + std::to_string(f.limit);
  Statement s(db_, sql);
  s.bind(2, f.model);  // ?1 is unused: the problems are ?7 on
  if (f.status) s.bind(3, to_string(*f.status));
  s.bind(4, f.since).bind(5, f.until).bind(6, f.run_id);
  bind_problems(s, f.problem);
  std::vector<RunRecord> out;
  while (s.step()) out.push_back(rows::read_run(s));
  return out;
}

std::vector<EvaluationRecord> Store::evaluations_of_run(int64_t run_id) {
  std::lock_guard lock(*mutex_);
  Statement s(db_, std::string("SELECT ") + rows::kEvaluationColumns +
                       " FROM evaluations WHERE run_id = ? ORDER BY id");
  s.bind(1, run_id);
  std::vector<EvaluationRecord> out;
  while (s.step()) out.push_back(rows::read_evaluation(s));
  return out;
}

std::optional<AttemptSummary> Store::attempt(int64_t attempt_id) {
  std::lock_guard lock(*mutex_);
  Statement s(db_,
              std::string("SELECT ") + rows::kAttemptColumns + " FROM attempts a WHERE a.id = ?");
  s.bind(1, attempt_id);
  if (!s.step()) return std::nullopt;
  return rows::read_attempt(s);
}

std::vector<AttemptSummary> Store::attempts_of_run(int64_t run_id) {
  std::lock_guard lock(*mutex_);
  Statement s(db_, std::string("SELECT ") + rows::kAttemptColumns +
                       " FROM attempts a WHERE a.run_id = ? ORDER BY a.id");
  s.bind(1, run_id);
  std::vector<AttemptSummary> out;
  while (s.step()) out.push_back(rows::read_attempt(s));
  return out;
}

std::vector<AttemptSummary> Store::attempts_to_resume(int64_t run_id) {
  std::lock_guard lock(*mutex_);
  Statement s(db_, std::string("SELECT ") + rows::kAttemptColumns +
                       " FROM attempts a WHERE a.run_id = ? "
                       "AND a.status IN ('running', 'interrupted') ORDER BY a.id");
  s.bind(1, run_id);
  std::vector<AttemptSummary> out;
  while (s.step()) out.push_back(rows::read_attempt(s));
  return out;
}

std::vector<TurnRecord> Store::turns(int64_t attempt_id) {
  std::lock_guard lock(*mutex_);
  Statement s(db_, std::string("SELECT ") + rows::kTurnColumns +
                       " FROM turns WHERE attempt_id = ? ORDER BY turn_index");
  s.bind(1, attempt_id);
  std::vector<TurnRecord> out;
  while (s.step()) out.push_back(rows::read_turn(s));
  return out;
}

std::vector<EvaluationRecord> Store::evaluations_of_attempt(int64_t attempt_id) {
  std::lock_guard lock(*mutex_);
  Statement s(db_, std::string("SELECT ") + rows::kEvaluationColumns +
                       " FROM evaluations WHERE attempt_id = ? ORDER BY id");
  s.bind(1, attempt_id);
  std::vector<EvaluationRecord> out;
  while (s.step()) out.push_back(rows::read_evaluation(s));
  return out;
}

std::optional<std::string> Store::kernel_source(const std::string& hash) {
  std::lock_guard lock(*mutex_);
  Statement s(db_, "SELECT source FROM kernels WHERE hash = ?");
  s.bind(1, hash);
  if (!s.step()) return std::nullopt;
  return s.text(0);
}

std::optional<AttemptDetail> Store::attempt_detail(int64_t attempt_id) {
  auto summary = attempt(attempt_id);
  if (!summary) return std::nullopt;
  AttemptDetail d;
  d.attempt = std::move(*summary);
  d.turns = turns(attempt_id);
  d.evaluations = evaluations_of_attempt(attempt_id);
  if (d.attempt.best_kernel_hash) d.best_kernel_source = kernel_source(*d.attempt.best_kernel_hash);
  return d;
}

}  // namespace mgk::store
