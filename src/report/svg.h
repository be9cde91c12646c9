// Small SVG charts drawn as text, for the self-contained HTML report: no script, no
// external file. Each chart is one <svg id=...> element with a title, axes with ticks, its
// marks and a legend; a chart with nothing to draw is its title and its notes saying why,
// without empty axes. Notes wrap to the chart's width.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mgk::report::svg {

// Text safe inside XML/HTML elements and attribute values.
std::string escape(const std::string& text);

struct Chart {
  std::string id;          // the element id (the HTML test finds plots by it)
  std::string title;
  std::string x_label, y_label;
  std::vector<std::string> notes;  // lines under the title: why something is not drawn, ...
};

struct Series {
  std::string name;                               // empty: not in the legend
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
  bool dashed = false;
  std::string color;  // empty: series_color of its position
  // Per point (same order), its interval (low, high), drawn as an error bar; none: no bar.
  std::vector<std::optional<std::pair<double, double>>> intervals;
  bool line = true;  // false: the points (and their bars) alone
  bool dotted = false;  // a third line style, beside solid and dashed
};

// Lines of each series over one x axis, y from 0 to y_max. `step`: each point holds its y
// until the next x (a threshold curve). `y_percent`: y is a fraction shown as a percent.
std::string line_chart(const Chart& chart, const std::vector<Series>& series, double y_max, bool step,
                       bool y_percent);

// One bar per category and series (values[series][category], absent: no bar), y from 0;
// `reference`: a dashed horizontal line, named in the legend (e.g. 1x: as fast as the
// reference). Legends sit under the x axis, clear of the marks.
std::string bar_chart(const Chart& chart, const std::vector<std::string>& categories,
                      const std::vector<std::string>& series_names,
                      const std::vector<std::vector<std::optional<double>>>& values,
                      std::optional<std::pair<double, std::string>> reference);

// One stacked bar per row (counts[row][segment]), segments coloured by `segment_colors`.
std::string stacked_bars(const Chart& chart, const std::vector<std::string>& rows,
                         const std::vector<std::string>& segments, const std::vector<std::string>& segment_colors,
                         const std::vector<std::vector<int>>& counts);

// The chart's title and its notes (or "nothing to draw"), for a chart without marks.
std::string nothing_to_draw(const Chart& chart);

// The colour of the i-th series.
std::string series_color(size_t i);

}  // namespace mgk::report::svg
