#include "eval/elf.h"

#include <cstring>

#include "common/error.h"
#include "common/file.h"

namespace mgk::eval {

namespace {

template <typename T>
T read_at(const std::string& bytes, uint64_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) throw Error("truncated ELF file");
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof(T));
  return v;
}

std::string c_string_at(const std::string& bytes, uint64_t offset) {
  if (offset >= bytes.size()) throw Error("ELF string out of range");
  return std::string(bytes.c_str() + offset, strnlen(bytes.c_str() + offset, bytes.size() - offset));
}

}  // namespace

ElfImage::ElfImage(const std::filesystem::path& path) : path_(path), bytes_(read_file(path, "built library")) {
  auto bad = [&](const std::string& what) { return Error(path.string() + ": " + what); };
  if (bytes_.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes_.data(), ELFMAG, SELFMAG) != 0 ||
      bytes_[EI_CLASS] != ELFCLASS64)
    throw bad("not a 64-bit ELF file");
  const auto eh = read_at<Elf64_Ehdr>(bytes_, 0);
  std::vector<Elf64_Shdr> headers;
  for (int i = 0; i < eh.e_shnum; ++i)
    headers.push_back(read_at<Elf64_Shdr>(bytes_, eh.e_shoff + uint64_t(i) * eh.e_shentsize));
  for (int i = 0; i < eh.e_phnum; ++i)
    segments_.push_back(read_at<Elf64_Phdr>(bytes_, eh.e_phoff + uint64_t(i) * eh.e_phentsize));
  const bool named = eh.e_shstrndx < headers.size();
  for (const auto& h : headers)
    sections_.push_back({named ? c_string_at(bytes_, headers[eh.e_shstrndx].sh_offset + h.sh_name) : "", h});
  for (const auto& s : headers) {
    if (s.sh_type == SHT_DYNSYM) {
      if (s.sh_link >= headers.size()) throw bad("bad symbol table");
      const auto& strtab = headers[s.sh_link];
      for (uint64_t off = s.sh_offset + sizeof(Elf64_Sym); off + sizeof(Elf64_Sym) <= s.sh_offset + s.sh_size;
           off += sizeof(Elf64_Sym)) {
        const auto sym = read_at<Elf64_Sym>(bytes_, off);
        ElfSymbol e;
        e.name = c_string_at(bytes_, strtab.sh_offset + sym.st_name);
        if (e.name.empty()) continue;
        e.defined = sym.st_shndx != SHN_UNDEF;
        e.bind = ELF64_ST_BIND(sym.st_info);
        e.type = ELF64_ST_TYPE(sym.st_info);
        e.visibility = ELF64_ST_VISIBILITY(sym.st_other);
        symbols_.push_back(std::move(e));
      }
    } else if (s.sh_type == SHT_DYNAMIC) {
      if (s.sh_link >= headers.size()) throw bad("bad dynamic section");
      const auto& strtab = headers[s.sh_link];
      for (uint64_t off = s.sh_offset; off + sizeof(Elf64_Dyn) <= s.sh_offset + s.sh_size; off += sizeof(Elf64_Dyn)) {
        const auto d = read_at<Elf64_Dyn>(bytes_, off);
        if (d.d_tag == DT_NULL) break;
        if (d.d_tag == DT_NEEDED) needed_.push_back(c_string_at(bytes_, strtab.sh_offset + d.d_un.d_val));
        if (d.d_tag == DT_TEXTREL || (d.d_tag == DT_FLAGS && (d.d_un.d_val & DF_TEXTREL))) textrel_ = true;
      }
    }
  }
}

}  // namespace mgk::eval
