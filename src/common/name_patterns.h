// Names chosen on the command line: names and globs ('*' and '?'), comma-separated, the
// flag repeatable, and a file of them (one per line, '#' starts a comment). One syntax, read
// here only, for `bench --problems`, `history --problem` and `report --problems`.
#pragma once
#include <string>
#include <vector>

namespace mgk {

struct NamePatterns {
  std::vector<std::string> patterns;  // in the order given, duplicates dropped; empty: every name

  // Each value split on commas, blanks around an item dropped; then `file`'s lines, if
  // given. UsageError naming the file when it cannot be read or holds no pattern.
  static NamePatterns parse(const std::vector<std::string>& values, const std::string& file = "");
  bool all() const { return patterns.empty(); }
  // A pattern matches the whole name, or for "category/name" the name alone ('all_reduce').
  bool matches(const std::string& name) const;
  std::string text() const;  // the patterns comma-joined; "*" for every name
};

// '*' any run of characters, '?' one; anything else itself.
bool glob_match(const std::string& pattern, const std::string& text);

}  // namespace mgk
