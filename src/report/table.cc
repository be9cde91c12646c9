#include "report/table.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "common/error.h"
#include "common/format.h"

namespace mgk::report {

Table::Table(std::vector<std::string> header, std::vector<bool> right)
    : header_(std::move(header)), right_(std::move(right)) {
  right_.resize(header_.size(), false);
}

void Table::add(std::vector<std::string> row) {
  if (row.size() != header_.size())
    throw Error("report table: a row of " + std::to_string(row.size()) + " cells under " +
                std::to_string(header_.size()) + " columns");
  rows_.push_back(std::move(row));
}

std::string Table::text() const {
  std::vector<size_t> width(header_.size());
  for (size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
  for (const auto& row : rows_)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string pad(width[c] - cells[c].size(), ' ');
      if (c > 0) l += "  ";
      l += right_[c] ? pad + cells[c] : cells[c] + (c + 1 < cells.size() ? pad : "");
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header_);
  for (const auto& row : rows_) line(row);
  return out;
}

std::string Table::markdown() const {
  auto line = [](const std::vector<std::string>& cells) {
    std::string l = "|";
    for (const auto& c : cells) {
      std::string cell = c;
      for (size_t at = 0; (at = cell.find('|', at)) != std::string::npos; at += 2) cell.replace(at, 1, "\\|");
      l += " " + cell + " |";
    }
    return l + "\n";
  };
  std::string out = line(header_) + "|";
  for (bool r : right_) out += r ? "---:|" : "---|";
  out += "\n";
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string percent(const std::optional<double>& f) { return f ? fixed(*f * 100, 1) + "%" : "-"; }

std::string token_count(double n) {
  if (n >= 1e6) return fixed(n / 1e6, 2) + "M";
  if (n >= 1e4) return fixed(n / 1e3, 1) + "k";
  return fixed(n, 0);
}

std::string duration(double s) {
  char b[32];
  long t = long(s + 0.5);
  if (t < 60) std::snprintf(b, sizeof b, "%lds", t);
  else if (t < 3600) std::snprintf(b, sizeof b, "%ldm%02lds", t / 60, t % 60);
  else std::snprintf(b, sizeof b, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
  return b;
}

}  // namespace mgk::report
