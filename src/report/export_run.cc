#include "report/export_run.h"

#include <unistd.h>

#include <set>

#include "common/error.h"
#include "common/file.h"
#include "report/bench_report.h"
#include "report/render_data.h"
#include "report/render_html.h"
#include "report/render_text.h"
#include "store/attempt_view.h"
#include "store/records_json.h"

namespace mgk::report {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  write_file(file, text);
}

// "tp/gemm_allreduce", sample 2, attempt 17 -> "tp__gemm_allreduce-s2-a17": one folder per
// attempt, sorted by problem and sample, unique by the attempt's id.
std::string attempt_folder(const store::AttemptSummary& a) {
  std::string p = a.problem;
  for (size_t at; (at = p.find('/')) != std::string::npos;) p.replace(at, 1, "__");
  return p + "-s" + std::to_string(a.sample) + "-a" + std::to_string(a.id);
}

const char* const kReadme = R"(# An exported mgk run

- `run.json`: the run as the store holds it (kind, model, arguments, status, summary, cost).
- `evaluations.json`: every evaluation of the run, with the evaluator's whole result.
- `attempts/PROBLEM-sSAMPLE-aID/`: one folder per attempt:
  - `conversation.md`: the attempt as `mgk show ID` prints it;
  - `attempt.json`: the attempt, every turn (the messages sent, the reply, the feedback) and
    its evaluations;
  - `kernels/HASH.cu`: every kernel it proposed, named by the SHA-256 of its source.
- `report.md`, `report.json`, `report.html`: a bench run's report, as `mgk report` prints it.
)";

}  // namespace

ExportCounts export_run(store::Store& store, int64_t run_id, const fs::path& dir) {
  const std::optional<store::RunRecord> run = store.run(run_id);
  if (!run)
    throw UsageError("no run " + std::to_string(run_id) + " in " + store.path().string() +
                     " ('mgk history --runs' lists them)");
  std::error_code ec;
  if (fs::exists(dir) && !(fs::is_directory(dir) && fs::is_empty(dir, ec)))
    throw UsageError(dir.string() + " exists and is not an empty folder: name a new one (export never overwrites)");

  const fs::path target = fs::absolute(dir).lexically_normal();
  const fs::path partial = target.parent_path() / (target.filename().string() + ".partial-" + std::to_string(::getpid()));
  fs::remove_all(partial, ec);
  ExportCounts counts;
  try {
    write(partial / "README.md", kReadme);
    write(partial / "run.json", nlohmann::json(*run).dump(2) + "\n");
    nlohmann::json evaluations = nlohmann::json::array();
    for (const auto& e : store.evaluations_of_run(run_id)) evaluations.push_back(e);
    counts.evaluations = int(evaluations.size());
    write(partial / "evaluations.json", evaluations.dump(2) + "\n");

    for (const auto& summary : store.attempts_of_run(run_id)) {
      const std::optional<store::AttemptDetail> detail = store.attempt_detail(summary.id);
      if (!detail) continue;
      const fs::path folder = partial / "attempts" / attempt_folder(summary);
      write(folder / "conversation.md", store::render_attempt(*detail));
      write(folder / "attempt.json", nlohmann::json(*detail).dump(2) + "\n");
      std::set<std::string> hashes;
      for (const auto& t : detail->turns)
        if (t.kernel_hash) hashes.insert(*t.kernel_hash);
      for (const auto& e : detail->evaluations) hashes.insert(e.kernel_hash);
      for (const auto& h : hashes)
        if (auto source = store.kernel_source(h)) {
          write(folder / "kernels" / (h + ".cu"), *source);
          ++counts.kernels;
        }
      ++counts.attempts;
    }

    if (run->kind == "bench") {
      const std::vector<RunReport> reports = {build_report(store, run_id)};
      write(partial / "report.md", render_text(reports, true));
      write(partial / "report.json", report_json(reports).dump(2) + "\n");
      write(partial / "report.html", render_html(reports));
      counts.with_report = true;
    }
    if (fs::exists(target)) fs::remove(target);  // the empty folder it was given
    fs::rename(partial, target);
  } catch (...) {
    fs::remove_all(partial, ec);  // nothing half-written is left behind
    throw;
  }
  return counts;
}

}  // namespace mgk::report
