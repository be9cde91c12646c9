// What the agent takes from a model's reply: the fenced code blocks, and from them the
// kernel file (refine mode) or the one command (shell mode). Anything else is a format
// error whose `problem` is fed back to the model.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace mgk::agent {

struct CodeBlock {
  std::string lang;  // the fence's info word, lower-cased ("cuda", "bash", "" if none)
  std::string body;  // the lines between the fences, with a final newline
  bool closed = true;  // false for a block still open at the end of the reply
};

// Fenced blocks (``` or longer, indented by at most three spaces) in order of appearance.
std::vector<CodeBlock> fenced_blocks(std::string_view text);

struct ParsedReply {
  bool ok = false;
  std::string code;     // the kernel file or the command, when ok
  std::string problem;  // when not ok: one sentence saying what is wrong with the reply
};

// Refine mode: exactly one block tagged cuda, cu, cpp, c++ or cuh (other blocks, e.g. a
// ```text table, are ignored).
ParsedReply parse_kernel_reply(std::string_view text);

// Shell mode: exactly one block tagged bash, sh or shell, and no other fenced block.
ParsedReply parse_shell_reply(std::string_view text);

}  // namespace mgk::agent
