// A table of text cells, printed either aligned for a terminal (numbers right-aligned, two
// spaces between columns, no trailing spaces) or as a Markdown table.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace mgk::report {

class Table {
 public:
  // `right`: per column, whether it is right-aligned (numbers).
  Table(std::vector<std::string> header, std::vector<bool> right);
  void add(std::vector<std::string> row);  // as many cells as the header
  bool empty() const { return rows_.empty(); }
  std::string text() const;
  std::string markdown() const;

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

// Numbers as the text reports print them (costs and speedups: store/history_table.h).
std::string percent(const std::optional<double>& fraction);  // "62.5%", "-"
std::string token_count(double n);                            // "950", "12.3k", "4.56M"
std::string duration(double seconds);                         // "42s", "3m05s", "1h02m"

}  // namespace mgk::report
