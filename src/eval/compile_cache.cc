#include "eval/compile_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file.h"
#include "common/hash.h"

namespace mgk::eval {

namespace fs = std::filesystem;

namespace {

bool under(const fs::path& file, const fs::path& dir) {
  const fs::path rel = file.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != ".." && rel.is_relative();
}

// Written whole or not at all: concurrent compiles of one kernel never read half a file.
void write_atomically(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  const fs::path tmp = p.string() + ".tmp." + std::to_string(getpid()) + "." +
                       std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << bytes;
    if (!out.flush()) throw Error("cannot write " + tmp.string());
  }
  fs::rename(tmp, p);
}

std::optional<std::string> read_if_there(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

nlohmann::json to_json(const Manifest& m) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : m.files) files.push_back({{"path", f.path}, {"local", f.local}, {"sha256", f.sha256}});
  return {{"files", files}, {"others", m.others}, {"climb", m.climb}, {"fixed_dir", m.fixed_dir}};
}

std::optional<Manifest> manifest_from(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("files") || !j.contains("others")) return std::nullopt;
  try {
    Manifest m;
    for (const auto& f : j["files"]) m.files.push_back({f.at("path"), f.at("local"), f.at("sha256")});
    m.others = j["others"].get<std::vector<std::string>>();
    m.climb = j.value("climb", 0);
    m.fixed_dir = j.value("fixed_dir", "");
    return m;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // written by another version: the slow path rebuilds it
  }
}

// How many folders up the #include names of `text` climb (`../../common.h`: 2).
int climb_of(const std::string& text) {
  static const std::regex include(R"((^|\n)[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]*))");
  int most = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), include); it != std::sregex_iterator(); ++it) {
    int up = 0;
    for (const auto& part : fs::path((*it)[2].str())) up += part == "..";
    most = std::max(most, up);
  }
  return most;
}

}  // namespace

std::vector<std::string> included_files(const std::string& text) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find('\n', at), text.size());
    // `# 12 "file" flags` (gcc) or `#line 12 "file"`; not `#pragma ... "text"`
    if (text[at] == '#') {
      size_t i = at + 1;
      while (i < end && text[i] == ' ') ++i;
      if (text.compare(i, 4, "line") == 0) i += 4;
      while (i < end && text[i] == ' ') ++i;
      const size_t digits = i;
      while (i < end && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      while (i < end && text[i] == ' ') ++i;
      const size_t q = (i > digits && i < end && text[i] == '"') ? i : std::string::npos;
      if (q < end) {
        std::string name;
        size_t i = q + 1;
        for (; i < end && text[i] != '"'; ++i) {
          if (text[i] == '\\' && i + 1 < end) ++i;
          name += text[i];
        }
        if (i < end && !name.empty() && name.front() != '<' && seen.insert(name).second) out.push_back(name);
      }
    }
    at = end + 1;
  }
  return out;
}

std::optional<Manifest> make_manifest(const std::string& kernel_source, const std::vector<std::string>& included,
                                      const fs::path& kernel_dir, const std::vector<fs::path>& system_dirs) {
  // __has_include: a header that appears later would change the build, nothing hashed would.
  if (kernel_source.find("__has_include") != std::string::npos) return std::nullopt;
  Manifest m;
  m.climb = climb_of(kernel_source);
  for (const auto& name : included) {
    if (name == kStagedName) continue;  // the kernel itself: its bytes are in the pre-key
    const fs::path p = fs::path(name).lexically_normal();
    if (p.is_relative()) return std::nullopt;  // not one nvcc resolved through a folder we know
    bool system = false;
    for (const auto& d : system_dirs) system = system || under(p, d);
    if (system) {
      m.others.push_back(p.string());
      continue;
    }
    const std::string bytes = read_file(p, "included header");
    const bool local = under(p, kernel_dir);
    if (local && bytes.find("__has_include") != std::string::npos) return std::nullopt;
    if (local) m.climb = std::max(m.climb, climb_of(bytes));
    m.files.push_back({local ? p.lexically_relative(kernel_dir).string() : p.string(), local, sha256_hex(bytes)});
  }
  // `../common.h` found beside another parent folder is another file: such a kernel is found
  // only in its own folder.
  if (m.climb > 0) m.fixed_dir = kernel_dir.lexically_normal().string();
  return m;
}

bool manifest_holds(const Manifest& m, const fs::path& kernel_dir) {
  std::error_code ec;
  if (!m.fixed_dir.empty() && m.fixed_dir != kernel_dir.lexically_normal().string()) return false;
  for (const auto& f : m.files) {
    const fs::path p = f.local ? kernel_dir / f.path : fs::path(f.path);
    auto bytes = read_if_there(p);
    if (!bytes || sha256_hex(*bytes) != f.sha256) return false;
  }
  // A header found elsewhere could be found in the kernel's folder instead, which comes
  // before the problem's folder and the system's on the include path. Every tail of its
  // path (types.h, bits/types.h, ...) is a name an #include could have used.
  // With `..` in its names, the folders above the kernel's are searched too.
  std::vector<fs::path> searched = {kernel_dir};
  for (int up = 0; up < m.climb; ++up) searched.push_back(searched.back().parent_path());
  auto shadowed = [&](const fs::path& p) {
    std::vector<fs::path> parts(p.begin(), p.end());
    fs::path tail;
    for (auto it = parts.rbegin(); it != parts.rend() && *it != "/"; ++it) {
      tail = tail.empty() ? *it : *it / tail;
      for (const auto& dir : searched)  // the header itself, found from above, is no shadow
        if (fs::exists(dir / tail, ec) && !fs::equivalent(dir / tail, p, ec)) return true;
    }
    return false;
  };
  for (const auto& f : m.files)
    if (!f.local && shadowed(f.path)) return false;
  for (const auto& o : m.others)
    if (shadowed(o)) return false;
  return true;
}

fs::path CompileCache::entry(const std::string& build_key) const {
  return root_ / build_key.substr(0, 2) / build_key;
}

fs::path CompileCache::stage(const std::string& kernel_hash, const std::string& bytes) const {
  const fs::path staged = root_ / "staged" / kernel_hash.substr(0, 2) / kernel_hash / kStagedName;
  if (!fs::exists(staged)) write_atomically(staged, bytes);
  return staged;
}

std::optional<std::string> CompileCache::find(const std::string& pre_key, const fs::path& kernel_dir) const {
  auto build_key = read_if_there(root_ / "pre" / pre_key.substr(0, 2) / pre_key);
  if (!build_key || build_key->size() != 64 || !fs::exists(library(*build_key))) return std::nullopt;
  auto text = read_if_there(entry(*build_key) / "manifest.json");
  if (!text) return std::nullopt;
  auto m = manifest_from(*text);
  if (!m || !manifest_holds(*m, kernel_dir)) return std::nullopt;
  return build_key;
}

void CompileCache::record(const std::string& build_key, const std::string& log, const std::optional<std::string>& pre_key,
                          const std::optional<Manifest>& manifest) const {
  write_atomically(entry(build_key) / "compile.log", log);
  if (!pre_key || !manifest) return;
  write_atomically(entry(build_key) / "manifest.json", to_json(*manifest).dump());
  link(*pre_key, build_key);
}

void CompileCache::link(const std::string& pre_key, const std::string& build_key) const {
  if (!fs::exists(entry(build_key) / "manifest.json")) return;  // built without a fast path
  write_atomically(root_ / "pre" / pre_key.substr(0, 2) / pre_key, build_key);
}

std::string CompileCache::log(const std::string& build_key) const {
  return read_if_there(entry(build_key) / "compile.log").value_or("");
}

}  // namespace mgk::eval
