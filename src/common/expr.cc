#include "common/expr.h"

#include <cctype>
#include <cmath>
#include <set>

#include "common/error.h"

namespace mgk::expr {
namespace {

// Recursive-descent evaluator; `vars == nullptr` collects names instead of evaluating.
class Parser {
 public:
  Parser(std::string_view text, const Vars* vars, std::set<std::string>* seen)
      : text_(text), vars_(vars), seen_(seen) {}

  double parse_all() {
    double v = ternary();
    skip_space();
    if (pos_ != text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw UsageError("in expression '" + std::string(text_) + "' at position " +
                     std::to_string(pos_) + ": " + what);
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool eat(std::string_view op) {
    skip_space();
    if (text_.substr(pos_, op.size()) == op) {
      pos_ += op.size();
      return true;
    }
    return false;
  }

  double ternary() {
    double c = logical_or();
    if (eat("?")) {
      double a = ternary();
      if (!eat(":")) fail("expected ':' of '?:'");
      double b = ternary();
      return c != 0 ? a : b;
    }
    return c;
  }

  double logical_or() {
    double v = logical_and();
    while (eat("||")) {
      double r = logical_and();
      v = (v != 0 || r != 0) ? 1 : 0;
    }
    return v;
  }

  double logical_and() {
    double v = equality();
    while (eat("&&")) {
      double r = equality();
      v = (v != 0 && r != 0) ? 1 : 0;
    }
    return v;
  }

  double equality() {
    double v = relational();
    for (;;) {
      if (eat("==")) v = (v == relational()) ? 1 : 0;
      else if (eat("!=")) v = (v != relational()) ? 1 : 0;
      else return v;
    }
  }

  double relational() {
    double v = additive();
    for (;;) {
      if (eat("<=")) v = (v <= additive()) ? 1 : 0;
      else if (eat(">=")) v = (v >= additive()) ? 1 : 0;
      else if (eat("<")) v = (v < additive()) ? 1 : 0;
      else if (eat(">")) v = (v > additive()) ? 1 : 0;
      else return v;
    }
  }

  double additive() {
    double v = multiplicative();
    for (;;) {
      if (eat("+")) v += multiplicative();
      else if (eat("-")) v -= multiplicative();
      else return v;
    }
  }

  double multiplicative() {
    double v = unary();
    for (;;) {
      skip_space();
      // '*' but not '**' (power binds tighter and is handled in power()).
      if (text_.substr(pos_, 1) == "*" && text_.substr(pos_, 2) != "**") {
        ++pos_;
        v *= unary();
      } else if (eat("/")) {
        double d = unary();
        if (d == 0 && vars_) fail("division by zero");
        v = vars_ ? v / d : 0;
      } else if (eat("%")) {
        double d = unary();
        if (d == 0 && vars_) fail("modulo by zero");
        v = vars_ ? std::fmod(v, d) : 0;
      } else {
        return v;
      }
    }
  }

  double unary() {
    if (eat("-")) return -unary();
    if (eat("+")) return unary();
    skip_space();
    if (text_.substr(pos_, 1) == "!" && text_.substr(pos_, 2) != "!=") {
      ++pos_;
      return unary() == 0 ? 1 : 0;
    }
    return power();
  }

  double power() {
    double base = primary();
    if (eat("**")) return std::pow(base, unary());
    return base;
  }

  double primary() {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      double v = ternary();
      if (!eat(")")) fail("expected ')'");
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.' ||
              ((text_[pos_] == '+' || text_[pos_] == '-') &&
               (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E'))))
        ++pos_;
      std::string num(text_.substr(start, pos_ - start));
      try {
        size_t used = 0;
        double v = std::stod(num, &used);
        if (used != num.size()) fail("bad number '" + num + "'");
        return v;
      } catch (const std::logic_error&) {
        fail("bad number '" + num + "'");
      }
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
      std::string name(text_.substr(start, pos_ - start));
      if (eat("(")) return call(name);
      if (!vars_) {
        seen_->insert(name);
        return 1;
      }
      auto it = vars_->find(name);
      if (it == vars_->end()) fail("unknown name '" + name + "'");
      return it->second;
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }

  double call(const std::string& fn) {
    std::vector<double> args;
    if (!eat(")")) {
      do args.push_back(ternary());
      while (eat(","));
      if (!eat(")")) fail("expected ')' after arguments of " + fn);
    }
    auto need = [&](size_t n) {
      if (args.size() != n) fail(fn + " takes " + std::to_string(n) + " argument(s)");
    };
    if (fn == "min") return need(2), std::min(args[0], args[1]);
    if (fn == "max") return need(2), std::max(args[0], args[1]);
    if (fn == "ceil") return need(1), std::ceil(args[0]);
    if (fn == "floor") return need(1), std::floor(args[0]);
    if (fn == "log2") return need(1), std::log2(args[0]);
    fail("unknown function '" + fn + "' (min, max, ceil, floor, log2)");
  }

  std::string_view text_;
  const Vars* vars_;
  std::set<std::string>* seen_;
  size_t pos_ = 0;
};

}  // namespace

double evaluate(std::string_view text, const Vars& vars) {
  return Parser(text, &vars, nullptr).parse_all();
}

long long evaluate_count(std::string_view text, const Vars& vars) {
  double v = evaluate(text, vars);
  if (!(v >= 0) || v != std::floor(v) || v > 9.0e15)
    throw UsageError("expression '" + std::string(text) + "' must give a non-negative integer, gave " +
                     std::to_string(v));
  return static_cast<long long>(v);
}

std::vector<std::string> names(std::string_view text) {
  std::set<std::string> seen;
  Parser(text, nullptr, &seen).parse_all();
  return {seen.begin(), seen.end()};
}

}  // namespace mgk::expr
