#include "agent/reply_parser.h"

#include <algorithm>
#include <cctype>

namespace mgk::agent {
namespace {

struct Fence {
  size_t ticks = 0;  // 0: not a fence line
  std::string info;
};

Fence parse_fence(std::string_view line) {
  size_t indent = 0;
  while (indent < line.size() && indent < 4 && line[indent] == ' ') ++indent;
  if (indent > 3) return {};
  size_t ticks = 0;
  while (indent + ticks < line.size() && line[indent + ticks] == '`') ++ticks;
  if (ticks < 3) return {};
  std::string_view rest = line.substr(indent + ticks);
  if (rest.find('`') != std::string_view::npos) return {};  // inline code, not a fence
  size_t b = rest.find_first_not_of(" \t");
  std::string info;
  if (b != std::string_view::npos) {
    size_t e = rest.find_first_of(" \t{", b);
    info = std::string(rest.substr(b, e == std::string_view::npos ? e : e - b));
  }
  std::transform(info.begin(), info.end(), info.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return {ticks, info};
}

bool one_of(const std::string& lang, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (lang == n) return true;
  return false;
}

std::string tag_list(const std::vector<CodeBlock>& blocks) {
  std::string s;
  for (const auto& b : blocks) s += std::string(s.empty() ? "" : ", ") + "```" + b.lang;
  return s;
}

}  // namespace

std::vector<CodeBlock> fenced_blocks(std::string_view text) {
  std::vector<CodeBlock> blocks;
  size_t pos = 0;
  CodeBlock* open = nullptr;
  size_t open_ticks = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    Fence f = parse_fence(line);
    if (open == nullptr) {
      if (f.ticks > 0) {
        blocks.push_back({f.info, "", false});
        open = &blocks.back();
        open_ticks = f.ticks;
      }
    } else if (f.ticks >= open_ticks && f.info.empty()) {
      open->closed = true;
      open = nullptr;
    } else {
      open->body.append(line);
      open->body.push_back('\n');
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return blocks;
}

ParsedReply parse_kernel_reply(std::string_view text) {
  std::vector<CodeBlock> all = fenced_blocks(text);
  std::vector<CodeBlock> kernels;
  for (const auto& b : all)
    if (one_of(b.lang, {"cuda", "cu", "cpp", "c++", "cuh"})) kernels.push_back(b);
  if (kernels.empty()) {
    if (all.empty()) return {false, "", "it holds no fenced code block."};
    return {false, "", "it holds no code block tagged cuda (found: " + tag_list(all) + ")."};
  }
  if (kernels.size() > 1)
    return {false, "", "it holds " + std::to_string(kernels.size()) +
                           " cuda code blocks; it must hold exactly one, with the whole file."};
  if (!kernels[0].closed) return {false, "", "its cuda code block is never closed with ```."};
  if (kernels[0].body.find_first_not_of(" \t\r\n") == std::string::npos)
    return {false, "", "its cuda code block is empty."};
  return {true, kernels[0].body, ""};
}

ParsedReply parse_shell_reply(std::string_view text) {
  std::vector<CodeBlock> all = fenced_blocks(text);
  if (all.empty()) return {false, "", "it holds no fenced code block."};
  if (all.size() > 1)
    return {false, "", "it holds " + std::to_string(all.size()) + " code blocks (" + tag_list(all) +
                           "); it must hold exactly one, with the command to run."};
  const CodeBlock& b = all[0];
  if (!one_of(b.lang, {"bash", "sh", "shell"}))
    return {false, "", "its code block is tagged '" + b.lang + "', not bash."};
  if (!b.closed) return {false, "", "its bash code block is never closed with ```."};
  if (b.body.find_first_not_of(" \t\r\n") == std::string::npos)
    return {false, "", "its bash code block is empty."};
  return {true, b.body, ""};
}

}  // namespace mgk::agent
