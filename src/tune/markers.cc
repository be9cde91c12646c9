#include "tune/markers.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "common/error.h"

namespace mgk::tune {
namespace {

constexpr size_t kMaxRangeValues = 4096;
constexpr std::uintmax_t kMaxIncludedBytes = 4u << 20;  // a header larger than this is left out

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// A decimal number as C would accept it in a define (no hex, inf or nan).
std::optional<Value> parse_number(std::string_view s) {
  if (s.empty()) return std::nullopt;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  bool digits = false, integer = true;
  for (size_t k = i; k < s.size(); ++k) {
    char c = s[k];
    if (std::isdigit(static_cast<unsigned char>(c))) digits = true;
    else if (c == '.' || c == 'e' || c == 'E' || ((c == '-' || c == '+') && k > i &&
                                                  (s[k - 1] == 'e' || s[k - 1] == 'E')))
      integer = false;
    else
      return std::nullopt;
  }
  if (!digits) return std::nullopt;
  double v = 0;
  std::string_view body = s[0] == '+' ? s.substr(1) : s;
  auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  if (ec != std::errc() || end != body.data() + body.size() || !std::isfinite(v))
    return std::nullopt;
  if (integer && std::fabs(v) > 9.0e15) return std::nullopt;  // beyond exact doubles
  return Value{std::string(s), v, integer};
}

// Digits after the decimal point in a plain decimal ("0.25" -> 2); -1 with an exponent.
int decimals(std::string_view s) {
  if (s.find_first_of("eE") != std::string_view::npos) return -1;
  size_t dot = s.find('.');
  return dot == std::string_view::npos ? 0 : int(s.size() - dot - 1);
}

Value make_value(double v, bool integer, int places) {
  if (integer) return Value{std::to_string(static_cast<long long>(v)), v, true};
  char buf[64];
  if (places >= 0) {
    std::snprintf(buf, sizeof buf, "%.*f", std::max(places, 1), v);
  } else {
    auto r = std::to_chars(buf, buf + sizeof buf - 3, v);
    if (std::string_view(buf, r.ptr).find_first_of(".e") == std::string_view::npos)
      *r.ptr++ = '.', *r.ptr++ = '0';  // keep it a floating literal in C
    *r.ptr = '\0';
  }
  double parsed = std::strtod(buf, nullptr);
  return Value{buf, parsed, false};
}

class MarkerParser {
 public:
  MarkerParser(std::string_view source, std::string label) : source_(source), label_(std::move(label)) {}

  SearchSpace parse() {
    int line_no = 0;
    size_t pos = 0;
    while (pos <= source_.size()) {
      size_t nl = source_.find('\n', pos);
      std::string_view line = source_.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
      ++line_no;
      parse_line(line, line_no);
      if (nl == std::string_view::npos) break;
      pos = nl + 1;
    }
    check_constraints();
    check_unconditional_defines();
    return SearchSpace(std::move(parameters_), std::move(constraints_));
  }

 private:
  [[noreturn]] void fail(int line, const std::string& what) const {
    throw UsageError(label_ + ":" + std::to_string(line) + ": " + what);
  }

  void parse_line(std::string_view line, int line_no) {
    static const std::regex marker_after_code(R"(\S.*//\s*mgk:tune)");
    std::string_view t = trim(line);
    if (t.substr(0, 2) != "//") {
      if (t.find("mgk:tune") != std::string_view::npos &&
          std::regex_search(std::string(t), marker_after_code))
        fail(line_no, "an mgk:tune marker must be a comment on its own line, not after code");
      return;
    }
    std::string_view body = trim(t.substr(2));
    if (body.substr(0, 8) != "mgk:tune") return;
    std::string_view rest = body.substr(8);
    if (rest.substr(0, 11) == "-constraint" && (rest.size() == 11 || std::isspace(
                                                     static_cast<unsigned char>(rest[11])))) {
      std::string_view text = trim(rest.substr(11));
      if (text.empty())
        fail(line_no, "mgk:tune-constraint needs an expression, e.g. "
                      "'// mgk:tune-constraint BLOCKS * CHUNK_KB <= 4096'");
      constraints_.push_back(Constraint{std::string(text), line_no});
      return;
    }
    if (!rest.empty() && !std::isspace(static_cast<unsigned char>(rest[0]))) {
      size_t end = rest.find_first_of(" \t");
      fail(line_no, "unknown marker 'mgk:tune" + std::string(rest.substr(0, end)) +
                        "'; the markers are mgk:tune and mgk:tune-constraint");
    }
    parse_parameter(trim(rest), line_no);
  }

  void parse_parameter(std::string_view text, int line_no) {
    size_t comment = text.find("//");
    if (comment != std::string_view::npos) text = trim(text.substr(0, comment));
    size_t name_end = text.find_first_of(" \t");
    std::string name(text.substr(0, name_end));
    if (name.empty())
      fail(line_no, "mgk:tune needs a parameter name and values, e.g. "
                    "'// mgk:tune BLOCKS 8 16 32'");
    if (!is_identifier(name))
      fail(line_no, "mgk:tune parameter '" + name + "' is not a C identifier");
    if (auto it = lines_.find(name); it != lines_.end())
      fail(line_no, "mgk:tune " + name + " is declared twice (first on line " +
                        std::to_string(it->second) + ")");
    std::string_view spec =
        name_end == std::string_view::npos ? std::string_view{} : trim(text.substr(name_end));
    if (spec.empty())
      fail(line_no, "mgk:tune " + name + " has no values; write e.g. '// mgk:tune " + name +
                        " 8 16 32' or '// mgk:tune " + name + " range(8, 64, *2)'");
    Parameter p{name, {}, line_no};
    if (spec.substr(0, 5) == "range" && trim(spec.substr(5)).substr(0, 1) == "(")
      p.values = parse_range(name, trim(spec.substr(5)), line_no);
    else
      p.values = parse_list(name, spec, line_no);
    lines_[name] = line_no;
    parameters_.push_back(std::move(p));
  }

  std::vector<Value> parse_list(const std::string& name, std::string_view spec, int line_no) {
    std::vector<Value> values;
    std::set<std::string> seen;
    size_t i = 0;
    while (i < spec.size()) {
      size_t b = spec.find_first_not_of(" \t,", i);
      if (b == std::string_view::npos) break;
      size_t e = spec.find_first_of(" \t,", b);
      std::string_view token = spec.substr(b, e == std::string_view::npos ? e : e - b);
      i = e == std::string_view::npos ? spec.size() : e;
      Value v;
      if (auto n = parse_number(token)) v = *n;
      else if (is_identifier(token)) v = Value{std::string(token), std::nullopt, false};
      else
        fail(line_no, "mgk:tune " + name + ": '" + std::string(token) +
                          "' is not a number or an identifier");
      if (!seen.insert(v.text).second)
        fail(line_no, "mgk:tune " + name + ": value " + v.text + " appears twice");
      values.push_back(std::move(v));
    }
    if (values.empty()) fail(line_no, "mgk:tune " + name + " has no values");
    return values;
  }

  // "(a, b)", "(a, b, *k)", "(a, b, +k)" or "(a, b, k)": inclusive of b.
  std::vector<Value> parse_range(const std::string& name, std::string_view spec, int line_no) {
    const std::string what = "mgk:tune " + name + " range" + std::string(spec);
    if (spec.back() != ')')
      fail(line_no, what + ": expected 'range(start, end)' or 'range(start, end, *k|+k)'");
    std::vector<std::string_view> args;
    std::string_view inner = spec.substr(1, spec.size() - 2);
    for (size_t b = 0;;) {
      size_t c = inner.find(',', b);
      args.push_back(trim(inner.substr(b, c == std::string_view::npos ? c : c - b)));
      if (c == std::string_view::npos) break;
      b = c + 1;
    }
    if (args.size() < 2 || args.size() > 3)
      fail(line_no, what + ": expected 2 or 3 arguments: range(start, end[, *k|+k])");
    auto number = [&](std::string_view s, const char* role) {
      auto v = parse_number(s);
      if (!v) fail(line_no, what + ": " + role + " '" + std::string(s) + "' is not a number");
      return *v;
    };
    Value start = number(args[0], "start"), end = number(args[1], "end");
    bool geometric = false;
    Value step{"1", 1.0, true};
    if (args.size() == 3) {
      std::string_view s = args[2];
      if (!s.empty() && (s[0] == '*' || s[0] == '+')) {
        geometric = s[0] == '*';
        s = trim(s.substr(1));
      }
      step = number(s, "step");
    }
    if (*start.number > *end.number)
      fail(line_no, what + ": start is greater than end");
    if (geometric && (*step.number <= 1 || *start.number <= 0))
      fail(line_no, what + ": a geometric range needs a factor > 1 and a start > 0");
    if (!geometric && *step.number <= 0) fail(line_no, what + ": the step must be positive");

    const bool integer = start.is_integer && end.is_integer && step.is_integer;
    int places = -1;
    if (!integer) {
      int d1 = decimals(start.text), d2 = decimals(step.text);
      // Arithmetic steps keep the inputs' decimals (0.1 + 2 * 0.1 prints as 0.3); geometric
      // ones print the shortest exact form.
      places = (geometric || d1 < 0 || d2 < 0) ? -1 : std::max(d1, d2);
    }
    const double stop = *end.number + 1e-9 * std::fabs(*end.number);
    std::vector<Value> values;
    for (size_t i = 0;; ++i) {
      double v = geometric ? *start.number * std::pow(*step.number, double(i))
                           : *start.number + double(i) * *step.number;
      if (v > stop) break;
      if (values.size() == kMaxRangeValues)
        fail(line_no, what + " has more than " + std::to_string(kMaxRangeValues) +
                          " values; use a larger step");
      values.push_back(make_value(v, integer, places));
    }
    return values;
  }

  void check_constraints() const {
    for (const auto& c : constraints_) {
      std::vector<std::string> names;
      try {
        names = expr::names(c.text);
      } catch (const Error& e) {
        fail(c.line, std::string("mgk:tune-constraint: ") + e.what());
      }
      for (const auto& n : names) {
        auto it = std::find_if(parameters_.begin(), parameters_.end(),
                               [&](const Parameter& p) { return p.name == n; });
        if (it == parameters_.end())
          fail(c.line, "mgk:tune-constraint uses '" + n + "', which no mgk:tune marker "
                       "declares; constraints may only name tune parameters");
        if (!it->numeric())
          fail(c.line, "mgk:tune-constraint uses " + n + ", whose values (line " +
                           std::to_string(it->line) + ") are not all numbers");
      }
    }
  }

  // `#define NAME ...` with no #ifndef guard anywhere: the -DNAME=V of a trial would be
  // overridden by the file (nvcc only warns), and every trial would measure the same kernel.
  void check_unconditional_defines() const {
    const std::string src(source_);
    for (const auto& p : parameters_) {
      const std::regex define(R"((^|\n)[ \t]*#[ \t]*define[ \t]+)" + p.name + R"(\b)");
      const std::regex guard(R"(#[ \t]*ifndef[ \t]+)" + p.name + R"(\b|defined[ \t]*\(?[ \t]*)" +
                             p.name + R"(\b)");
      std::smatch m;
      if (std::regex_search(src, m, define) && !std::regex_search(src, guard)) {
        int line = 1 + int(std::count(src.begin(), src.begin() + m.position(0) + m.length(1), '\n'));
        fail(line, "#define " + p.name + " has no '#ifndef " + p.name +
                       "' guard, so the tuner's -D" + p.name +
                       "=... would be overridden; wrap it in #ifndef " + p.name + " ... #endif");
      }
    }
  }

  std::string_view source_;
  std::string label_;
  std::vector<Parameter> parameters_;
  std::vector<Constraint> constraints_;
  std::map<std::string, int> lines_;
};

}  // namespace

SearchSpace parse_markers(std::string_view source, const std::string& label) {
  return MarkerParser(source, label).parse();
}

std::vector<std::string> parameters_without_default(std::string_view source,
                                                    const SearchSpace& space) {
  const std::string src(source);
  std::vector<std::string> missing;
  for (const auto& p : space.parameters()) {
    const std::regex guard(R"(#[ \t]*ifndef[ \t]+)" + p.name + R"(\b|defined[ \t]*\(?[ \t]*)" +
                           p.name + R"(\b)");
    if (!std::regex_search(src, guard)) missing.push_back(p.name);
  }
  return missing;
}

namespace {

// The NAMEs of `source`'s `#include "NAME"` lines, in order.
std::vector<std::string> quoted_includes(std::string_view source) {
  std::vector<std::string> names;
  for (size_t pos = 0; pos < source.size();) {
    size_t nl = source.find('\n', pos);
    std::string_view line = trim(source.substr(pos, nl == std::string_view::npos ? nl : nl - pos));
    pos = nl == std::string_view::npos ? source.size() : nl + 1;
    if (line.substr(0, 1) != "#") continue;
    line = trim(line.substr(1));
    if (line.substr(0, 7) != "include") continue;
    line = trim(line.substr(7));
    size_t end = line.find('"', 1);
    if (line.substr(0, 1) == "\"" && end != std::string_view::npos && end > 1)
      names.emplace_back(line.substr(1, end - 1));
  }
  return names;
}

// `file` as one name whatever the path that led to it ("a/../b.h" and "b.h" are one file).
std::filesystem::path identity(const std::filesystem::path& file) {
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(file, ec);
  return ec ? std::filesystem::absolute(file, ec).lexically_normal() : canonical;
}

// Appends to `out` the files `source` (in `dir`) includes with `#include "NAME"`, then theirs.
void append_included(std::string_view source, const std::filesystem::path& dir,
                     const std::vector<std::filesystem::path>& include_dirs,
                     std::set<std::filesystem::path>& seen, std::string& out) {
  for (const std::string& name : quoted_includes(source)) {
    std::vector<std::filesystem::path> where = {dir};
    where.insert(where.end(), include_dirs.begin(), include_dirs.end());
    for (const auto& d : where) {
      std::error_code ec;
      const std::filesystem::path file = d / name;
      if (!std::filesystem::is_regular_file(file, ec)) continue;  // the compiler looks on too
      // The first found is what the compiler includes: read it (once), or leave it out.
      if (std::filesystem::file_size(file, ec) <= kMaxIncludedBytes && seen.insert(identity(file)).second) {
        std::ifstream in(file, std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        out += '\n';
        out += text.str();
        append_included(text.str(), file.parent_path(), include_dirs, seen, out);
      }
      break;
    }
  }
}

}  // namespace

std::string with_included_files(std::string_view source, const std::filesystem::path& path,
                                const std::vector<std::filesystem::path>& include_dirs) {
  std::string out(source);
  std::set<std::filesystem::path> seen = {identity(path)};
  append_included(source, path.parent_path(), include_dirs, seen, out);
  return out;
}

}  // namespace mgk::tune
