// The prompt template engine: just enough for prompt files to be readable text.
//   {{name}}                      the variable's value
//   {{#if name}}...{{/if}}        the block when the variable is non-empty
//   {{#if name}}...{{else}}...{{/if}}
// A block tag alone on its line takes the line with it. Every variable a template uses,
// in {{name}} or {{#if name}}, must be given (possibly empty): a missing one is an error
// naming the template and the variable, so a typo never ships a prompt with a hole in it.
// Variables given but not used are fine.
#pragma once
#include <map>
#include <string>
#include <string_view>

namespace mgk::agent {

using TemplateVars = std::map<std::string, std::string>;

// Throws mgk::Error("prompt template 'NAME': ...") for a missing variable or a malformed
// tag (unclosed {{, {{/if}} without {{#if}}, an {{#if}} never closed).
std::string render_template(std::string_view template_name, std::string_view text,
                            const TemplateVars& vars);

}  // namespace mgk::agent
