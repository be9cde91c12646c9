#include "common/file.h"

#include <fstream>
#include <sstream>

namespace mgk {

std::string read_file(const std::filesystem::path& path, const std::string& what, ExitCode code) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::string message = "cannot read " + what + " " + path.string();
    if (code == ExitCode::kUsage) throw UsageError(message);  // callers catch bad input by type
    throw Error(message, code);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw Error("cannot write " + path.string());
}

}  // namespace mgk
