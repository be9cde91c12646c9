#include "report/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mgk::report::svg {
namespace {

constexpr double kLeft = 64, kRight = 24, kTop = 40, kPlotHeight = 240, kWidth = 560;

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string tick_label(double v, bool percent) {
  char b[32];
  if (percent) std::snprintf(b, sizeof b, "%.0f%%", v * 100);
  else if (std::fabs(v - std::round(v)) < 1e-9) std::snprintf(b, sizeof b, "%.0f", v);
  else std::snprintf(b, sizeof b, "%.2g", v);
  return b;
}

// About five round ticks from 0 to max (1, 2 or 5 times a power of ten apart).
std::vector<double> ticks(double max) {
  if (!(max > 0)) max = 1;
  double raw = max / 5, mag = std::pow(10, std::floor(std::log10(raw)));
  double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
  std::vector<double> t;
  for (double v = 0; v <= max * (1 + 1e-9); v += step) t.push_back(v);
  return t;
}

// The notes as lines that fit `width` (12px text: about 6.6px a character), broken at spaces.
std::vector<std::string> note_lines(const std::vector<std::string>& notes, double width) {
  const size_t fit = size_t(std::max(20.0, (width - kLeft - kRight) / 6.6));
  std::vector<std::string> lines;
  for (const std::string& note : notes) {
    std::string line, word;
    auto flush_word = [&] {
      if (word.empty()) return;
      if (!line.empty() && line.size() + 1 + word.size() > fit) lines.push_back(line), line.clear();
      line += (line.empty() ? "" : " ") + word;
      word.clear();
    };
    for (char ch : note + " ") {
      if (ch == ' ') flush_word();
      else word += ch;
    }
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::string svg_open(const std::string& id, double width, double height) {
  return "<svg id=\"" + escape(id) + "\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) +
         "\" height=\"" + num(height) + "\" viewBox=\"0 0 " + num(width) + " " + num(height) + "\" role=\"img\">\n";
}

// The title, and the note lines under it from y = kTop on.
std::string title_and_notes(const Chart& c, const std::vector<std::string>& lines) {
  std::string b = "<title>" + escape(c.title) + "</title>\n";
  b += "<text x=\"" + num(kLeft) + "\" y=\"20\" class=\"plot-title\">" + escape(c.title) + "</text>\n";
  for (size_t i = 0; i < lines.size(); ++i)
    b += "<text x=\"" + num(kLeft) + "\" y=\"" + num(kTop + 14.0 * double(i)) + "\" class=\"plot-note\">" +
         escape(lines[i]) + "</text>\n";
  return b;
}

struct Frame {
  double width, plot_width, bottom;  // bottom: y pixel of the x axis
  double legend_y;                   // where the first legend row goes
  std::string body;
  double x_of(double x, double x_max) const { return kLeft + (x_max > 0 ? x / x_max : 0) * plot_width; }
  double y_of(double y, double y_max) const { return bottom - (y_max > 0 ? y / y_max : 0) * kPlotHeight; }
};

struct LegendItem {
  std::string name, color;
  bool dashed = false, dotted = false;
};

std::string dash_attribute(bool dashed, bool dotted, const char* dash) {
  return dotted ? " stroke-dasharray=\"2 3\"" : dashed ? std::string(" stroke-dasharray=\"") + dash + "\"" : "";
}

// The <svg> opening, title, notes, y axis with grid lines, and the axis labels;
// `below_axis`: room for the x tick labels; `legend_rows`: room for the legend under it.
// The caller adds marks to body.
Frame open_frame(const Chart& c, double width, double y_max, bool percent, double below_axis, size_t legend_rows) {
  Frame f;
  f.width = width;
  f.plot_width = width - kLeft - kRight;
  const std::vector<std::string> lines = note_lines(c.notes, width);
  f.bottom = kTop + 14.0 * double(lines.size()) + kPlotHeight;
  const double x_label_y = f.bottom + below_axis + 30;
  f.legend_y = x_label_y + 20;
  const double height = f.legend_y + 16.0 * double(legend_rows) + 4;
  std::string& b = f.body;
  b += svg_open(c.id, width, height) + title_and_notes(c, lines);
  for (double t : ticks(y_max)) {
    double y = f.y_of(t, y_max);
    b += "<line x1=\"" + num(kLeft) + "\" x2=\"" + num(width - kRight) + "\" y1=\"" + num(y) + "\" y2=\"" + num(y) +
         "\" class=\"grid\"/>\n";
    b += "<text x=\"" + num(kLeft - 6) + "\" y=\"" + num(y + 4) + "\" class=\"tick\" text-anchor=\"end\">" +
         tick_label(t, percent) + "</text>\n";
  }
  b += "<line x1=\"" + num(kLeft) + "\" x2=\"" + num(kLeft) + "\" y1=\"" + num(f.bottom - kPlotHeight) + "\" y2=\"" +
       num(f.bottom) + "\" class=\"axis\"/>\n";
  b += "<line x1=\"" + num(kLeft) + "\" x2=\"" + num(width - kRight) + "\" y1=\"" + num(f.bottom) + "\" y2=\"" +
       num(f.bottom) + "\" class=\"axis\"/>\n";
  b += "<text transform=\"translate(16 " + num(f.bottom - kPlotHeight / 2) +
       ") rotate(-90)\" class=\"axis-label\" text-anchor=\"middle\">" + escape(c.y_label) + "</text>\n";
  b += "<text x=\"" + num(kLeft + f.plot_width / 2) + "\" y=\"" + num(x_label_y) +
       "\" class=\"axis-label\" text-anchor=\"middle\">" + escape(c.x_label) + "</text>\n";
  return f;
}

void legend(Frame& f, const std::vector<LegendItem>& items) {
  double y = f.legend_y;
  for (const LegendItem& it : items) {
    f.body += "<line x1=\"" + num(kLeft) + "\" x2=\"" + num(kLeft + 18) + "\" y1=\"" + num(y) + "\" y2=\"" +
              num(y) + "\" stroke=\"" + it.color + "\" stroke-width=\"3\"" + dash_attribute(it.dashed, it.dotted, "5 3") +
              "/>\n";
    f.body += "<text x=\"" + num(kLeft + 24) + "\" y=\"" + num(y + 4) + "\" class=\"legend\">" + escape(it.name) +
              "</text>\n";
    y += 16;
  }
}

}  // namespace

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string nothing_to_draw(const Chart& c) {
  const std::vector<std::string> lines = note_lines(c.notes.empty() ? std::vector<std::string>{"nothing to draw"} : c.notes, kWidth);
  return svg_open(c.id, kWidth, kTop + 14.0 * double(lines.size()) + 4) + title_and_notes(c, lines) + "</svg>\n";
}

std::string series_color(size_t i) {
  static const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"};
  return kPalette[i % (sizeof kPalette / sizeof *kPalette)];
}

std::string line_chart(const Chart& c, const std::vector<Series>& series, double y_max, bool step, bool percent) {
  double x_max = 0;
  std::vector<LegendItem> items;
  bool any = false;
  for (size_t i = 0; i < series.size(); ++i) {
    for (const auto& [x, y] : series[i].points) x_max = std::max(x_max, x);
    any |= !series[i].points.empty();
    if (!series[i].points.empty() && !series[i].name.empty())
      items.push_back({series[i].name, series[i].color.empty() ? series_color(i) : series[i].color, series[i].dashed,
                       series[i].dotted});
  }
  if (!any) return nothing_to_draw(c);
  if (x_max <= 0) x_max = 1;
  Frame f = open_frame(c, kWidth, y_max, percent, 12, items.size());
  for (double t : ticks(x_max)) {
    double x = f.x_of(t, x_max);
    f.body += "<line x1=\"" + num(x) + "\" x2=\"" + num(x) + "\" y1=\"" + num(f.bottom) + "\" y2=\"" +
              num(f.bottom + 4) + "\" class=\"axis\"/>\n";
    f.body += "<text x=\"" + num(x) + "\" y=\"" + num(f.bottom + 16) + "\" class=\"tick\" text-anchor=\"middle\">" +
              tick_label(t, false) + "</text>\n";
  }
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    if (s.points.empty()) continue;
    std::string d;
    for (size_t p = 0; p < s.points.size(); ++p) {
      const double x = f.x_of(s.points[p].first, x_max), y = f.y_of(s.points[p].second, y_max);
      if (p == 0) d += "M" + num(x) + " " + num(y);
      else if (step) d += " H" + num(x) + " V" + num(y);
      else d += " L" + num(x) + " " + num(y);
    }
    if (step) d += " H" + num(f.x_of(x_max, x_max));
    const std::string color = s.color.empty() ? series_color(i) : s.color;
    if (s.line)
      f.body += "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2.5\"" +
                dash_attribute(s.dashed, s.dotted, "6 4") + "/>\n";
    if (!step || !s.line)
      for (const auto& [x, y] : s.points)
        f.body += "<circle cx=\"" + num(f.x_of(x, x_max)) + "\" cy=\"" + num(f.y_of(y, y_max)) + "\" r=\"3.5\" fill=\"" +
                  color + "\"/>\n";
    for (size_t p = 0; p < s.points.size() && p < s.intervals.size(); ++p) {  // error bars, capped
      if (!s.intervals[p]) continue;
      const double x = f.x_of(s.points[p].first, x_max), lo = f.y_of(s.intervals[p]->first, y_max),
                   hi = f.y_of(s.intervals[p]->second, y_max);
      f.body += "<path d=\"M" + num(x) + " " + num(lo) + " V" + num(hi) + " M" + num(x - 4) + " " + num(lo) + " H" +
                num(x + 4) + " M" + num(x - 4) + " " + num(hi) + " H" + num(x + 4) + "\" stroke=\"" + color +
                "\" stroke-width=\"1.5\" class=\"error-bar\"/>\n";
    }
  }
  legend(f, items);
  return f.body + "</svg>\n";
}

std::string bar_chart(const Chart& c, const std::vector<std::string>& categories,
                      const std::vector<std::string>& series_names,
                      const std::vector<std::vector<std::optional<double>>>& values,
                      std::optional<std::pair<double, std::string>> reference) {
  double y_max = reference ? reference->first : 0;
  bool any = false;
  for (const auto& s : values)
    for (const auto& v : s)
      if (v) y_max = std::max(y_max, *v), any = true;
  if (!any) return nothing_to_draw(c);
  y_max = y_max > 0 ? y_max * 1.1 : 1;
  const size_t n_series = std::max<size_t>(1, series_names.size());
  const double group_w = std::max(28.0, 14.0 * double(n_series) + 10);
  const double width = std::max(kWidth, kLeft + kRight + group_w * double(categories.size()));
  std::vector<LegendItem> items;
  for (size_t i = 0; i < series_names.size(); ++i) items.push_back({series_names[i], series_color(i), false});
  if (reference) items.push_back({reference->second, "#8792a6", true});
  Frame f = open_frame(c, width, y_max, false, 150, items.size());
  const double slot = f.plot_width / double(std::max<size_t>(1, categories.size()));
  const double bar_w = std::min(28.0, (slot - 6) / double(n_series));
  for (size_t k = 0; k < categories.size(); ++k) {
    const double x0 = kLeft + slot * double(k) + (slot - bar_w * double(n_series)) / 2;
    for (size_t s = 0; s < values.size(); ++s) {
      if (k >= values[s].size() || !values[s][k]) continue;
      const double y = f.y_of(*values[s][k], y_max);
      f.body += "<rect x=\"" + num(x0 + bar_w * double(s)) + "\" y=\"" + num(y) + "\" width=\"" + num(bar_w - 1) +
                "\" height=\"" + num(f.bottom - y) + "\" fill=\"" + series_color(s) + "\"><title>" +
                escape(series_names[s] + " " + categories[k] + ": " + tick_label(*values[s][k], false)) +
                "</title></rect>\n";
    }
    const double cx = kLeft + slot * (double(k) + 0.5);
    // Upright, reading downwards from the axis: any number of long names fits.
    f.body += "<text transform=\"translate(" + num(cx + 4) + " " + num(f.bottom + 12) +
              ") rotate(-90)\" class=\"tick\" text-anchor=\"end\">" + escape(categories[k]) + "</text>\n";
  }
  if (reference) {
    const double y = f.y_of(reference->first, y_max);
    f.body += "<line x1=\"" + num(kLeft) + "\" x2=\"" + num(width - kRight) + "\" y1=\"" + num(y) + "\" y2=\"" +
              num(y) + "\" class=\"reference\"/>\n";
  }
  legend(f, items);
  return f.body + "</svg>\n";
}

std::string stacked_bars(const Chart& c, const std::vector<std::string>& rows, const std::vector<std::string>& segments,
                         const std::vector<std::string>& segment_colors, const std::vector<std::vector<int>>& counts) {
  int y_max = 0;
  for (const auto& r : counts) {
    int sum = 0;
    for (int v : r) sum += v;
    y_max = std::max(y_max, sum);
  }
  Frame f = open_frame(c, kWidth, y_max > 0 ? y_max : 1, false, 12, 0);
  const double slot = (f.plot_width - 150) / double(std::max<size_t>(1, rows.size()));
  const double bar_w = std::min(80.0, slot * 0.6);
  for (size_t r = 0; r < rows.size(); ++r) {
    const double x = kLeft + slot * double(r) + (slot - bar_w) / 2;
    double base = 0;
    for (size_t s = 0; s < segments.size() && s < counts[r].size(); ++s) {
      const int v = counts[r][s];
      if (v == 0) continue;
      const double y_top = f.y_of(base + v, y_max), y_bottom = f.y_of(base, y_max);
      f.body += "<rect x=\"" + num(x) + "\" y=\"" + num(y_top) + "\" width=\"" + num(bar_w) + "\" height=\"" +
                num(y_bottom - y_top) + "\" fill=\"" + segment_colors[s] + "\"><title>" +
                escape(rows[r] + ": " + segments[s] + " " + std::to_string(v)) + "</title></rect>\n";
      base += v;
    }
    f.body += "<text x=\"" + num(x + bar_w / 2) + "\" y=\"" + num(f.bottom + 16) +
              "\" class=\"tick\" text-anchor=\"middle\">" + escape(rows[r]) + "</text>\n";
  }
  // The legend at the right: every segment passed in, with its colour (the caller passes
  // only those that occur).
  double y = f.bottom - kPlotHeight + 8;
  const double lx = f.width - kRight - 140;
  for (size_t s = 0; s < segments.size(); ++s, y += 16) {
    f.body += "<rect x=\"" + num(lx) + "\" y=\"" + num(y - 8) + "\" width=\"12\" height=\"12\" fill=\"" +
              segment_colors[s] + "\"/>\n";
    f.body += "<text x=\"" + num(lx + 18) + "\" y=\"" + num(y + 2) + "\" class=\"legend\">" + escape(segments[s]) +
              "</text>\n";
  }
  return f.body + "</svg>\n";
}

}  // namespace mgk::report::svg
