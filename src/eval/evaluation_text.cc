#include "eval/evaluation_text.h"

#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

namespace mgk::eval {

std::string format_us(double us) {
  char b[32];
  if (us >= 10000) snprintf(b, sizeof(b), "%.1f ms", us / 1000);
  else if (us >= 1000) snprintf(b, sizeof(b), "%.2f ms", us / 1000);
  else if (us >= 100) snprintf(b, sizeof(b), "%.0f us", us);
  else if (us >= 10) snprintf(b, sizeof(b), "%.1f us", us);
  else snprintf(b, sizeof(b), "%.2f us", us);
  return b;
}

namespace {
std::string cell_time(const std::optional<results::Timing>& t) {
  if (!t) return "-";
  return format_us(t->median_us) + " (" + format_us(t->p10_us) + "-" + format_us(t->p90_us) + ")";
}

std::string pad(const std::string& s, size_t w) { return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' '); }

// The worst error over its bound ("0.31"; "-" where every output is compared exactly).
std::string error_ratio_cell(double ratio) {
  if (ratio <= 0) return "-";
  if (ratio >= 1e29) return "inf";
  char b[32];
  snprintf(b, sizeof(b), ratio >= 100 ? "%.3g" : "%.2f", ratio);
  return b;
}

// "  why: ..." and the first mismatch of a size that failed.
void failure_lines(std::ostream& out, const results::SizeResult& s) {
  out << "  why: " << s.failure << "\n";
  if (s.mismatch) out << "  first mismatch: " << results::describe(*s.mismatch) << "\n";
}
}  // namespace

std::string format_report(const results::EvalResult& r, const std::string& gpu_model) {
  std::ostringstream out;
  std::string gpus;
  for (int g : r.gpus) gpus += (gpus.empty() ? "" : ",") + std::to_string(g);
  out << r.problem << ", " << r.world_size << " ranks"
      << (gpus.empty() ? " (not run on a GPU)" : " on " + gpu_model + " (GPUs " + gpus + ")") << ", kernel " << r.kernel_hash.substr(0, 12) << (r.compile_cached ? " (compile cached)" : "")
      << (r.isolation.empty() ? "" : ", candidate isolated by " + r.isolation)
      << (r.write_guard.rfind("not enforced", 0) == 0 ? " (write guard " + r.write_guard + ")" : "") << "\n";
  if (!r.sizes.empty()) {
    out << pad("size", 8) << pad("trials", 8) << pad("reference median (p10-p90)", 30)
        << pad("candidate median (p10-p90)", 30) << pad("speedup", 9) << pad("roofline", 14) << pad("err/bound", 11)
        << "verdict\n";
    for (const auto& s : r.sizes) {
      char sp[32] = "-";
      if (s.speedup > 0) snprintf(sp, sizeof(sp), "%.2fx", s.speedup);
      if (s.candidate && !s.credible) snprintf(sp, sizeof(sp), "no");
      std::string roof = "-";
      if (s.roofline_fraction) {
        char b[32];
        snprintf(b, sizeof(b), "%.0f%% %s", *s.roofline_fraction * 100, s.roofline_bound.c_str());
        roof = b;
      }
      out << pad(s.size, 8) << pad(std::to_string(s.trials_passed), 8) << pad(cell_time(s.reference), 30)
          << pad(cell_time(s.candidate), 30) << pad(sp, 9) << pad(roof, 14) << pad(error_ratio_cell(s.worst_error_ratio), 11)
          << (s.correct ? "correct" : "INCORRECT") << "\n";
      if (s.candidate && !s.credible) out << "  no speedup: not credible: " << (s.not_credible.empty() ? "below the timing floor" : s.not_credible) << "\n";
      if (!s.correct) failure_lines(out, s);
    }
  }
  for (const auto& c : r.structure_checks) {
    std::string on;
    for (int g : c.gpus) on += (on.empty() ? "" : ",") + std::to_string(g);
    out << "structure check at W = " << c.world << " (GPUs " << on << ", ranks sharing them; checked, not timed):";
    for (const auto& s : c.sizes)
      out << " " << s.size << " " << (s.correct ? "correct" : "INCORRECT") << " (err/bound "
          << error_ratio_cell(s.worst_error_ratio) << ")";
    out << "\n";
    for (const auto& s : c.sizes)
      if (!s.correct) failure_lines(out, s);
  }
  std::string floors;
  for (const auto& s : r.sizes)
    if (s.floor) floors += (floors.empty() ? "" : ", ") + s.size + " " + format_us(s.floor->median_us);
  if (!floors.empty()) out << "timing floor (an empty kernel, timed the same way): " << floors << "\n";
  out << "verdict: " << to_string(r.verdict) << ": " << r.message << "\n";
  return out.str();
}

}  // namespace mgk::eval
