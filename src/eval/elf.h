// A built shared library read as the loader will see it: its sections (named), its
// segments, its dynamic symbols and needed libraries. Read whole into memory: candidate
// libraries are small, and the system libraries read for comparison are a few MB.
#pragma once
#include <elf.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace mgk::eval {

struct ElfSection {
  std::string name;
  Elf64_Shdr header;
};

struct ElfSymbol {
  std::string name;
  bool defined = false;  // not SHN_UNDEF
  int bind = 0;          // STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE, ...
  int type = 0;          // STT_FUNC, STT_OBJECT, ...
  int visibility = 0;    // STV_DEFAULT, STV_HIDDEN, ...
};

class ElfImage {
 public:
  // Throws mgk::Error when `path` is not a readable 64-bit ELF file.
  explicit ElfImage(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  const std::string& bytes() const { return bytes_; }
  const std::vector<ElfSection>& sections() const { return sections_; }
  const std::vector<Elf64_Phdr>& segments() const { return segments_; }
  const std::vector<ElfSymbol>& dynamic_symbols() const { return symbols_; }
  const std::vector<std::string>& needed() const { return needed_; }
  bool has_text_relocations() const { return textrel_; }

 private:
  std::filesystem::path path_;
  std::string bytes_;
  std::vector<ElfSection> sections_;
  std::vector<Elf64_Phdr> segments_;
  std::vector<ElfSymbol> symbols_;
  std::vector<std::string> needed_;
  bool textrel_ = false;
};

}  // namespace mgk::eval
