#include "eval/executable_code.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "common/error.h"
#include "eval/elf.h"
#include "process/run.h"

namespace mgk::eval {

namespace {

const std::set<std::string> kCodeSections = {".init", ".plt", ".plt.got", ".plt.sec", ".text", ".fini"};

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// The decoded instructions: start address -> the text objdump gives, and which function
// each address falls in.
struct Disassembly {
  std::map<uint64_t, std::string> instructions;
  std::map<uint64_t, std::string> functions;  // start address -> "<name>"
  std::string function_at(uint64_t address) const {
    auto it = functions.upper_bound(address);
    return it == functions.begin() ? "" : std::prev(it)->second;
  }
};

Disassembly disassemble(const std::filesystem::path& library) {
  const std::string objdump = process::find_program("objdump", "/usr/bin:/bin:/usr/local/bin").string();
  if (objdump.empty()) throw Error("objdump is missing (install binutils): mgk needs it to check built kernels");
  // Every section holding code, not .text alone.
  process::ProcessResult r =
      process::run_tool({objdump, "-d", "-w", "--no-show-raw-insn", library.string()}, std::chrono::minutes(1));
  if (!r.ok()) throw Error("objdump failed on " + library.string() + ": " + r.output.substr(0, 300));
  static const std::regex instruction(R"(^\s*([0-9a-f]+):\s+(\S.*)$)");
  static const std::regex function(R"(^([0-9a-f]+) (<.*>):$)");
  Disassembly d;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, function)) d.functions[std::stoull(m[1].str(), nullptr, 16)] = m[2].str();
    else if (std::regex_match(line, m, instruction)) d.instructions[std::stoull(m[1].str(), nullptr, 16)] = m[2].str();
  }
  return d;
}

bool is_padding(unsigned char c) { return c == 0x00 || c == 0x90 || c == 0xcc; }

}  // namespace

std::optional<std::string> executable_code_violation(const ElfImage& elf) {
  for (const auto& ph : elf.segments())
    if (ph.p_type == PT_GNU_STACK && (ph.p_flags & PF_X)) return std::string("it asks for an executable stack");
  if (elf.has_text_relocations())
    return std::string("it has text relocations (code the loader would have to make writable): build "
                       "position-independent code");
  for (const auto& s : elf.sections())
    if ((s.header.sh_flags & SHF_EXECINSTR) && !kCodeSections.count(s.name))
      return "its section '" + s.name + "' is executable (only the compiler's code sections may be)";

  const std::string& bytes = elf.bytes();
  for (const auto& ph : elf.segments()) {
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const uint64_t begin = ph.p_offset, end = std::min<uint64_t>(ph.p_offset + ph.p_filesz, bytes.size());
    std::vector<bool> covered(end - begin, false);
    for (const auto& s : elf.sections()) {
      const auto& h = s.header;
      if (h.sh_type == SHT_NOBITS || h.sh_size == 0 || h.sh_offset >= end || h.sh_offset + h.sh_size <= begin) continue;
      if (!kCodeSections.count(s.name))
        return "its executable segment holds the section '" + s.name + "' (only the compiler's code sections may be "
               "executable)";
      for (uint64_t o = std::max(begin, h.sh_offset); o < std::min(end, h.sh_offset + h.sh_size); ++o)
        covered[o - begin] = true;
    }
    for (uint64_t o = begin; o < end; ++o)
      if (!covered[o - begin] && !is_padding(static_cast<unsigned char>(bytes[o])))
        return "its executable segment holds bytes outside any code section, at file offset " + hex(o);
  }

  const Disassembly d = disassemble(elf.path());
  static const std::regex decoded(R"(^(syscall|sysenter|int\s+\$0x80)\b)");
  for (const auto& [address, text] : d.instructions) {
    std::smatch m;
    if (std::regex_search(text, m, decoded))
      return "a '" + m[1].str() + "' instruction at " + hex(address) +
             (d.function_at(address).empty() ? "" : " in " + d.function_at(address));
  }
  return std::nullopt;
}

}  // namespace mgk::eval
