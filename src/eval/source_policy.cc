#include "eval/source_policy.h"

#include <regex>
#include <sstream>

namespace mgk::eval {

namespace fs = std::filesystem;

namespace {

struct Pattern {
  const char* pattern;
  Rule rule;
  bool applies_to_references;
  bool look_in_strings;  // inline PTX is a string
};

const Pattern kPatterns[] = {
    {R"(multimem\.|\bcuMulticast\w*|\bNVLS\b)", Rule::kMulticast, true, true},
    {R"(\bnccl\w*)", Rule::kNccl, false, false},
    {R"(\bdl(open|sym|mopen|vsym)\b)", Rule::kCodeLoading, false, false},
    {R"(\bmgk_oracle\b)", Rule::kOracle, false, false},
    {R"(\bcudaDeviceReset\b)", Rule::kDeviceReset, true, false},
};

bool is_under(const fs::path& file, const fs::path& dir) {
  auto rel = file.lexically_normal().lexically_relative(dir.lexically_normal());
  return !rel.empty() && *rel.begin() != "..";
}

// A preprocessor line marker: `# 12 "file.cu" 2`; fills line and file.
bool line_marker(const std::string& text, int& line, std::string& file) {
  static const std::regex marker(R"(^#\s*(?:line\s+)?(\d+)\s+\"((?:[^\"\\]|\\.)*)\".*$)");
  if (text.empty() || text[0] != '#') return false;
  std::smatch m;
  if (!std::regex_match(text, m, marker)) return false;
  line = std::stoi(m[1].str());
  file = m[2].str();
  return true;
}

}  // namespace

std::string PolicyViolation::describe() const {
  return file + ":" + std::to_string(line) + ": '" + found + "': " + why;
}

std::string strip_comments(const std::string& s, bool keep_strings) {
  std::string out;
  out.reserve(s.size());
  enum { kCode, kLine, kBlock, kStr, kChr } st = kCode;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i], n = i + 1 < s.size() ? s[i + 1] : '\0';
    switch (st) {
      case kCode:
        if (c == '/' && n == '/') st = kLine, ++i;
        else if (c == '/' && n == '*') st = kBlock, ++i;
        else if (c == '"') st = kStr, out += keep_strings ? c : ' ';
        else if (c == '\'') st = kChr, out += keep_strings ? c : ' ';
        else out += c;
        break;
      case kLine:
        if (c == '\n') st = kCode, out += '\n';
        break;
      case kBlock:
        if (c == '*' && n == '/') st = kCode, ++i, out += ' ';
        else if (c == '\n') out += '\n';
        break;
      case kStr:
      case kChr:
        if (keep_strings) out += c;
        if (c == '\\') {
          if (keep_strings && i + 1 < s.size()) out += s[i + 1];
          ++i;
        } else if ((st == kStr && c == '"') || (st == kChr && c == '\'')) {
          st = kCode;
        } else if (c == '\n') {
          st = kCode;  // an unterminated literal ends with its line
          if (!keep_strings) out += '\n';
        }
        break;
    }
  }
  return out;
}

std::optional<PolicyViolation> check_preprocessed(const std::string& preprocessed,
                                                  const std::vector<fs::path>& trusted_dirs, bool is_reference) {
  std::vector<std::pair<std::regex, const Pattern*>> rules;
  for (const auto& r : kPatterns)
    if (!is_reference || r.applies_to_references) rules.emplace_back(std::regex(r.pattern, std::regex::icase), &r);
  std::istringstream in(preprocessed);
  std::string text, file;
  int line = 1;
  bool judged = true;
  for (std::string raw; std::getline(in, raw); ++line) {
    std::string f;
    int l = 0;
    if (line_marker(raw, l, f)) {
      file = f;
      line = l - 1;  // the next line is line l
      judged = !(f.size() > 1 && f.front() == '<' && f.back() == '>');  // <built-in>, <command-line>
      for (const auto& d : trusted_dirs)
        if (judged && is_under(f, d)) judged = false;
      continue;
    }
    if (!judged) continue;
    const std::string with_strings = strip_comments(raw, true);
    const std::string code = strip_comments(raw, false);
    for (const auto& [re, rule] : rules) {
      std::smatch m;
      const std::string& hay = rule->look_in_strings ? with_strings : code;
      if (std::regex_search(hay, m, re))
        return PolicyViolation{file, line, m.str(0), rule_info(rule->rule).why, rule->rule};
    }
  }
  return std::nullopt;
}

std::optional<PolicyViolation> check_ptx(const std::string& ptx, const std::string& file) {
  std::istringstream in(ptx);
  static const std::regex multicast(R"(\bmultimem\.\w+)", std::regex::icase);
  int line = 1;
  for (std::string raw; std::getline(in, raw); ++line) {
    std::smatch m;
    if (std::regex_search(raw, m, multicast))
      return PolicyViolation{file, line, m.str(0), rule_info(Rule::kMulticast).why, Rule::kMulticast};
  }
  return std::nullopt;
}

}  // namespace mgk::eval
