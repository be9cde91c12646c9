#include "agent/template.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace mgk::agent {
namespace {

std::string error_of(std::string_view text, const TemplateVars& vars) {
  try {
    render_template("feedback/example.md", text, vars);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Template, SubstitutesVariablesAndIgnoresUnusedOnes) {
  EXPECT_EQ(render_template("t", "Turn {{turn}} of {{ max_turns }}.", {{"turn", "2"}, {"max_turns", "8"}, {"unused", "x"}}),
            "Turn 2 of 8.");
  EXPECT_EQ(render_template("t", "no placeholders", {}), "no placeholders");
  // Values are inserted verbatim, never re-expanded.
  EXPECT_EQ(render_template("t", "{{a}}", {{"a", "{{b}}"}}), "{{b}}");
}

TEST(Template, AMissingVariableNamesTheTemplateTheLineAndTheVariable) {
  std::string e = error_of("first line\nhello {{name}}", {});
  EXPECT_NE(e.find("prompt template 'feedback/example.md'"), std::string::npos) << e;
  EXPECT_NE(e.find("line 2"), std::string::npos) << e;
  EXPECT_NE(e.find("'name'"), std::string::npos) << e;
  // In a condition too, and even in a branch that is not taken.
  EXPECT_NE(error_of("{{#if flag}}x{{/if}}", {}).find("'flag'"), std::string::npos);
  EXPECT_NE(error_of("{{#if flag}}{{inner}}{{/if}}", {{"flag", ""}}).find("'inner'"), std::string::npos);
}

TEST(Template, ConditionsTakeNonEmptyValuesAsTrue) {
  const char* text = "a{{#if x}}[yes {{x}}]{{else}}[no]{{/if}}b";
  EXPECT_EQ(render_template("t", text, {{"x", "1"}}), "a[yes 1]b");
  EXPECT_EQ(render_template("t", text, {{"x", ""}}), "a[no]b");
  EXPECT_EQ(render_template("t", "{{#if x}}{{#if y}}xy{{else}}x{{/if}}{{/if}}", {{"x", "1"}, {"y", ""}}), "x");
}

TEST(Template, ABlockTagAloneOnItsLineTakesTheLineWithIt) {
  const char* text =
      "head\n"
      "{{#if shell}}\n"
      "shell line\n"
      "  {{else}}  \n"
      "refine line\n"
      "{{/if}}\n"
      "tail\n";
  EXPECT_EQ(render_template("t", text, {{"shell", "1"}}), "head\nshell line\ntail\n");
  EXPECT_EQ(render_template("t", text, {{"shell", ""}}), "head\nrefine line\ntail\n");
  EXPECT_EQ(render_template("t", "{{#if a}}\n{{#if b}}\nab\n{{/if}}\n{{/if}}\nend", {{"a", "1"}, {"b", "1"}}),
            "ab\nend");
  // Inline tags leave the text around them alone.
  EXPECT_EQ(render_template("t", "x {{#if a}}A{{/if}} y\n", {{"a", "1"}}), "x A y\n");
}

TEST(Template, MalformedTagsAreErrors) {
  EXPECT_NE(error_of("{{name", {{"name", "x"}}).find("never closed"), std::string::npos);
  EXPECT_NE(error_of("{{#if a}}x", {{"a", "1"}}).find("never closed by {{/if}}"), std::string::npos);
  EXPECT_NE(error_of("x{{/if}}", {}).find("without a matching"), std::string::npos);
  EXPECT_NE(error_of("x{{else}}", {}).find("outside"), std::string::npos);
  EXPECT_NE(error_of("{{two words}}", {}).find("not a variable name"), std::string::npos);
}

}  // namespace
}  // namespace mgk::agent
