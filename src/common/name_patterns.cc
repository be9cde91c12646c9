#include "common/name_patterns.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace mgk {

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

void add(std::vector<std::string>& out, const std::string& item) {
  const std::string p = trim(item);
  if (!p.empty() && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
}

}  // namespace

NamePatterns NamePatterns::parse(const std::vector<std::string>& values, const std::string& file) {
  NamePatterns n;
  for (const std::string& v : values) {
    std::stringstream ss(v);
    std::string item;
    while (std::getline(ss, item, ',')) add(n.patterns, item);
  }
  if (file.empty()) return n;
  std::ifstream in(file);
  if (!in) throw UsageError("cannot read the problems file " + file + " (one name or glob per line, '#' comments)");
  const size_t before = n.patterns.size();
  std::string line;
  while (std::getline(in, line)) add(n.patterns, line.substr(0, line.find('#')));
  if (n.patterns.size() == before) throw UsageError("the problems file " + file + " names no problem");
  return n;
}

bool NamePatterns::matches(const std::string& name) const {
  if (patterns.empty()) return true;
  const std::string short_name = name.substr(name.find('/') + 1);
  for (const std::string& p : patterns)
    if (glob_match(p, name) || glob_match(p, short_name)) return true;
  return false;
}

std::string NamePatterns::text() const {
  std::string t;
  for (const std::string& p : patterns) t += (t.empty() ? "" : ",") + p;
  return t.empty() ? "*" : t;
}

bool glob_match(const std::string& pattern, const std::string& text) {
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p, ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++, mark = t;
    } else if (star != std::string::npos) {
      p = star + 1, t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace mgk
