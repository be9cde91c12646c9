#include "tune/tuning_text.h"

#include <algorithm>

#include "common/format.h"

namespace mgk::tune {
namespace {

std::string format_time(const Trial& t) {
  if (t.status != TrialStatus::kOk) return "-";
  return fixed(t.time_us, 2);
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string shorten(std::string s, std::size_t width) {
  if (s.size() > width) s = s.substr(0, width - 3) + "...";
  return s;
}

}  // namespace

std::string describe_params(const std::string& params_json) {
  const nlohmann::json j = nlohmann::json::parse(params_json);
  std::string out;
  for (const auto& [name, value] : j.items()) {
    if (!out.empty()) out += ' ';
    out += name + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

void sort_best_first(std::vector<Trial>& trials) {
  std::stable_sort(trials.begin(), trials.end(), [](const Trial& a, const Trial& b) {
    return a.score() < b.score();
  });
}

std::string format_trials_table(std::vector<Trial> trials, std::size_t limit, bool show_context) {
  sort_best_first(trials);
  const std::size_t shown = limit > 0 ? std::min(limit, trials.size()) : trials.size();
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"#", "time_us", "status", "configuration"};
  if (show_context) header.insert(header.end(), {"size", "world", "gpu"});
  bool any_message = false;
  for (std::size_t i = 0; i < shown; ++i)
    any_message |= trials[i].status != TrialStatus::kOk && !trials[i].message.empty();
  if (any_message) header.push_back("message");
  rows.push_back(header);
  for (std::size_t i = 0; i < shown; ++i) {
    const Trial& t = trials[i];
    std::vector<std::string> row = {std::to_string(i + 1), format_time(t), to_string(t.status),
                                    describe_params(t.key.params)};
    if (show_context)
      row.insert(row.end(), {t.key.context.size, std::to_string(t.key.context.world_size),
                             t.key.context.gpu_model});
    if (any_message) row.push_back(t.status == TrialStatus::kOk ? "" : shorten(t.message, 100));
    rows.push_back(std::move(row));
  }
  std::vector<std::size_t> widths(header.size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c)
      line += c + 1 == row.size() ? row[c] : pad(row[c], widths[c] + 2);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  if (shown < trials.size())
    out += "(" + std::to_string(trials.size() - shown) + " more not shown)\n";
  return out;
}

std::string progress_line(const Trial& trial, std::size_t index, std::size_t budget) {
  std::string line = "[" + std::to_string(index) + "/" + std::to_string(budget) + "] " +
                     describe_params(trial.key.params) + ": " + to_string(trial.status);
  if (trial.status == TrialStatus::kOk) line += " " + format_time(trial) + " us";
  else if (!trial.message.empty()) line += ": " + shorten(trial.message, 160);
  if (trial.from_cache) line += " (cached)";
  return line;
}

}  // namespace mgk::tune
