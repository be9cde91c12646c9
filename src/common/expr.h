// Arithmetic expressions over named variables: shapes ("W*N"), per-rank shapes
// ("R==0 ? W*C : 0"), cost models ("2*(W-1)*N*2") and tuner constraints
// ("BLOCKS * CHUNK_KB <= 4096"). Values are doubles; comparisons and logic yield 0 or 1.
// Grammar, lowest precedence first: ?: , ||, &&, == !=, < <= > >=, + -, * / %, unary - ! +,
// ** (right-assoc), primary (number, name, min(a,b), max(a,b), ceil(x), floor(x), ( e )).
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace mgk::expr {

using Vars = std::map<std::string, double>;

// Throws mgk::UsageError naming the expression, the position and the problem
// (syntax error, unknown name, division by zero).
double evaluate(std::string_view text, const Vars& vars);

// evaluate() that must produce a non-negative integer (shapes, element counts).
long long evaluate_count(std::string_view text, const Vars& vars);

// The variable names an expression mentions (function names excluded).
std::vector<std::string> names(std::string_view text);

}  // namespace mgk::expr
