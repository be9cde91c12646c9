#include "common/file.h"

#include <unistd.h>

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

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp =
      path.string() + ".tmp" + std::to_string(static_cast<long>(::getpid()));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.flush();
    if (!f) throw Error("cannot write " + tmp.string() + "; check the directory exists and is writable");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(tmp, ec);
    throw Error("cannot write " + path.string() + ": " + why);
  }
}

}  // namespace mgk
