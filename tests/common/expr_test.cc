#include "common/expr.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace mgk::expr {
namespace {

TEST(Expr, ArithmeticAndPrecedence) {
  Vars v{{"W", 8}, {"N", 1024}};
  EXPECT_DOUBLE_EQ(evaluate("W*N", v), 8192);
  EXPECT_DOUBLE_EQ(evaluate("2*(W-1)*N*2", v), 28672);
  EXPECT_DOUBLE_EQ(evaluate("1 + 2 * 3", v), 7);
  EXPECT_DOUBLE_EQ(evaluate("2 ** 3 ** 2", v), 512);  // right-associative
  EXPECT_DOUBLE_EQ(evaluate("-2 ** 2", v), -4);
  EXPECT_DOUBLE_EQ(evaluate("N % 1000", v), 24);
  EXPECT_DOUBLE_EQ(evaluate("1e3 + 2.5e-1", v), 1000.25);
}

TEST(Expr, ComparisonsLogicAndTernary) {
  Vars v{{"R", 0}, {"W", 4}, {"C", 256}};
  EXPECT_DOUBLE_EQ(evaluate("R==0 ? W*C : 0", v), 1024);
  v["R"] = 2;
  EXPECT_DOUBLE_EQ(evaluate("R==0 ? W*C : 0", v), 0);
  EXPECT_DOUBLE_EQ(evaluate("W >= 2 && C <= 256", v), 1);
  EXPECT_DOUBLE_EQ(evaluate("W > 4 || !(C != 256)", v), 1);
  EXPECT_DOUBLE_EQ(evaluate("R == 1 ? 10 : R == 2 ? 20 : 30", v), 20);
}

TEST(Expr, Functions) {
  Vars v{{"x", 7}};
  EXPECT_DOUBLE_EQ(evaluate("max(x, 9)", v), 9);
  EXPECT_DOUBLE_EQ(evaluate("min(x, 9)", v), 7);
  EXPECT_DOUBLE_EQ(evaluate("ceil(x / 2)", v), 4);
  EXPECT_DOUBLE_EQ(evaluate("floor(x / 2)", v), 3);
}

TEST(Expr, ErrorsNameTheProblem) {
  Vars v{{"N", 4}};
  try {
    evaluate("N * M", v);
    FAIL() << "expected an error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown name 'M'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(evaluate("N +", v), UsageError);
  EXPECT_THROW(evaluate("(N", v), UsageError);
  EXPECT_THROW(evaluate("N / 0", v), UsageError);
  EXPECT_THROW(evaluate("N $ 2", v), UsageError);
  EXPECT_THROW(evaluate("foo(1)", v), UsageError);
}

TEST(Expr, CountsMustBeNonNegativeIntegers) {
  Vars v{{"N", 10}, {"W", 4}};
  EXPECT_EQ(evaluate_count("N * W", v), 40);
  EXPECT_THROW(evaluate_count("N / W", v), UsageError);  // 2.5
  EXPECT_THROW(evaluate_count("-N", v), UsageError);
}

TEST(Expr, NamesListsVariablesNotFunctions) {
  auto n = names("max(W, R) * N + C");
  EXPECT_EQ(n, (std::vector<std::string>{"C", "N", "R", "W"}));
}

}  // namespace
}  // namespace mgk::expr
