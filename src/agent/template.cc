#include "agent/template.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "common/error.h"

namespace mgk::agent {
namespace {

struct Token {
  enum Kind { kText, kVar, kIf, kElse, kEndIf } kind;
  std::string text;  // the text, or the variable name
  int line = 1;
};

[[noreturn]] void fail(std::string_view name, int line, const std::string& what) {
  throw Error("prompt template '" + std::string(name) + "', line " + std::to_string(line) + ": " +
              what);
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string_view::npos ? "" : std::string(s.substr(b, e - b + 1));
}

bool valid_name(const std::string& n) {
  if (n.empty()) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

std::vector<Token> tokenize(std::string_view name, std::string_view text) {
  std::vector<Token> tokens;
  int line = 1;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t open = text.find("{{", pos);
    std::string_view chunk = text.substr(pos, open == std::string_view::npos ? open : open - pos);
    if (!chunk.empty()) tokens.push_back({Token::kText, std::string(chunk), line});
    for (char c : chunk) line += c == '\n';
    if (open == std::string_view::npos) break;
    size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) fail(name, line, "'{{' is never closed by '}}'");
    std::string tag = trim(text.substr(open + 2, close - open - 2));
    Token t{Token::kVar, tag, line};
    if (tag.rfind("#if ", 0) == 0) {
      t = {Token::kIf, trim(tag.substr(4)), line};
    } else if (tag == "else") {
      t = {Token::kElse, "", line};
    } else if (tag == "/if") {
      t = {Token::kEndIf, "", line};
    }
    if ((t.kind == Token::kVar || t.kind == Token::kIf) && !valid_name(t.text))
      fail(name, line, "'{{" + tag + "}}' is not a variable name or a known tag "
                       "({{#if NAME}}, {{else}}, {{/if}})");
    tokens.push_back(t);
    for (char c : text.substr(open, close + 2 - open)) line += c == '\n';
    pos = close + 2;
  }
  return tokens;
}

bool blank(std::string_view s) { return s.find_first_not_of(" \t") == std::string_view::npos; }

// A block tag alone on its line (only blanks around it) removes that line from the output.
// Decided on the original texts first, then applied, so that adjacent tags each see theirs.
void drop_standalone_lines(std::vector<Token>& tokens) {
  const size_t n = tokens.size();
  std::vector<size_t> keep_from(n, 0), keep_to(n, std::string::npos);  // per text token
  for (size_t i = 0; i < n; ++i) {
    Token::Kind k = tokens[i].kind;
    if (k != Token::kIf && k != Token::kElse && k != Token::kEndIf) continue;
    bool starts_line = i == 0;
    size_t cut_from = 0;
    if (i > 0 && tokens[i - 1].kind == Token::kText) {
      const std::string& b = tokens[i - 1].text;
      size_t nl = b.rfind('\n');
      cut_from = nl == std::string::npos ? 0 : nl + 1;
      starts_line = blank(std::string_view(b).substr(cut_from)) && (nl != std::string::npos || i == 1);
    }
    bool ends_line = i + 1 == n;
    size_t cut_to = 0;
    if (i + 1 < n && tokens[i + 1].kind == Token::kText) {
      const std::string& a = tokens[i + 1].text;
      size_t nl = a.find('\n');
      cut_to = nl == std::string::npos ? a.size() : nl + 1;
      ends_line = blank(std::string_view(a).substr(0, nl)) && (nl != std::string::npos || i + 2 == n);
    }
    if (!starts_line || !ends_line) continue;
    if (i > 0 && tokens[i - 1].kind == Token::kText) keep_to[i - 1] = cut_from;
    if (i + 1 < n && tokens[i + 1].kind == Token::kText) keep_from[i + 1] = cut_to;
  }
  for (size_t i = 0; i < n; ++i) {
    if (tokens[i].kind != Token::kText) continue;
    std::string& t = tokens[i].text;
    size_t to = std::min(keep_to[i], t.size());
    t = keep_from[i] >= to ? std::string() : t.substr(keep_from[i], to - keep_from[i]);
  }
}

class Renderer {
 public:
  Renderer(std::string_view name, const std::vector<Token>& tokens, const TemplateVars& vars)
      : name_(name), tokens_(tokens), vars_(vars) {}

  std::string render() {
    std::string out;
    size_t i = block(0, out, true);
    if (i < tokens_.size())
      fail(name_, tokens_[i].line, tokens_[i].kind == Token::kElse
                                       ? "{{else}} outside an {{#if}} block"
                                       : "{{/if}} without a matching {{#if}}");
    return out;
  }

 private:
  const std::string& value(const Token& t) {
    auto it = vars_.find(t.text);
    if (it == vars_.end())
      fail(name_, t.line, "the variable '" + t.text + "' has no value (the code rendering this "
                          "template must provide it)");
    return it->second;
  }

  // Renders tokens from i until an {{else}} or {{/if}} at this depth (or the end); returns
  // the index of that stopping token. `emit` false: validate without output.
  size_t block(size_t i, std::string& out, bool emit) {
    while (i < tokens_.size()) {
      const Token& t = tokens_[i];
      switch (t.kind) {
        case Token::kText:
          if (emit) out += t.text;
          ++i;
          break;
        case Token::kVar: {
          const std::string& v = value(t);
          if (emit) out += v;
          ++i;
          break;
        }
        case Token::kIf: {
          const bool on = !value(t).empty();
          size_t j = block(i + 1, out, emit && on);
          if (j < tokens_.size() && tokens_[j].kind == Token::kElse) j = block(j + 1, out, emit && !on);
          if (j >= tokens_.size() || tokens_[j].kind != Token::kEndIf)
            fail(name_, t.line, "{{#if " + t.text + "}} is never closed by {{/if}}");
          i = j + 1;
          break;
        }
        case Token::kElse:
        case Token::kEndIf:
          return i;
      }
    }
    return i;
  }

  std::string_view name_;
  const std::vector<Token>& tokens_;
  const TemplateVars& vars_;
};

}  // namespace

std::string render_template(std::string_view template_name, std::string_view text,
                            const TemplateVars& vars) {
  std::vector<Token> tokens = tokenize(template_name, text);
  drop_standalone_lines(tokens);
  return Renderer(template_name, tokens, vars).render();
}

}  // namespace mgk::agent
