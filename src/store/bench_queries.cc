// Store: what `mgk bench` asks beyond the generic queries: its earlier runs (to offer a
// resume) and taking a stopped run over again.
#include <unistd.h>

#include "common/error.h"
#include "store/rows.h"
#include "store/statement.h"
#include "store/store.h"

namespace mgk::store {

std::vector<RunRecord> Store::runs_of_kind(const std::string& kind) {
  std::lock_guard lock(*mutex_);
  Statement s(db_, std::string("SELECT ") + rows::kRunColumns +
                       " FROM runs r WHERE r.kind = ? ORDER BY r.created_at DESC, r.id DESC");
  s.bind(1, kind);
  std::vector<RunRecord> out;
  while (s.step()) out.push_back(rows::read_run(s));
  return out;
}

std::optional<RunRecord> Store::run_named(const std::string& kind, const std::string& name) {
  for (RunRecord& r : runs_of_kind(kind))
    if (r.name() == name) return std::move(r);
  return std::nullopt;
}

RunRecord Store::reopen_run(int64_t run_id) {
  {
    std::lock_guard lock(*mutex_);
    Statement s(db_,
                "UPDATE runs SET status = 'running', ended_at = NULL, host = ?, pid = ? "
                "WHERE id = ?");
    s.bind(1, rows::host_name()).bind(2, int64_t(getpid())).bind(3, run_id);
    s.run();
    if (db_.changes() == 0)
      throw NotFoundError("no run " + std::to_string(run_id) + " in " + path().string());
  }
  return *run(run_id);
}

}  // namespace mgk::store
