#include "tune/best_kernel.h"


namespace mgk::tune {
namespace {
constexpr std::string_view kBegin = "// ---- mgk tune: chosen configuration (begin) ----\n";
constexpr std::string_view kEnd = "// ---- mgk tune: chosen configuration (end) ----\n";
}  // namespace

std::string_view strip_baked_block(std::string_view source) {
  if (source.substr(0, kBegin.size()) != kBegin) return source;
  size_t end = source.find(kEnd);
  if (end == std::string_view::npos) return source;
  return source.substr(end + kEnd.size());
}

std::string bake_configuration(std::string_view source, const SearchSpace& space,
                               const Config& config, const std::vector<std::string>& notes) {
  std::string out(kBegin);
  for (const auto& note : notes) {
    // One comment line per note line, so a note cannot end the comment early.
    for (size_t b = 0; b <= note.size();) {
      size_t e = note.find('\n', b);
      std::string line = note.substr(b, e == std::string::npos ? e : e - b);
      while (!line.empty() && (line.back() == '\\' || line.back() == '\r')) line.pop_back();
      out += "// " + line + "\n";  // a trailing backslash would splice the next line in
      if (e == std::string::npos) break;
      b = e + 1;
    }
  }
  for (size_t i = 0; i < space.parameters().size(); ++i) {
    const Parameter& p = space.parameters()[i];
    out += "#ifndef " + p.name + "\n#define " + p.name + " " + p.values.at(config.at(i)).text +
           "\n#endif\n";
  }
  out += kEnd;
  out += strip_baked_block(source);
  return out;
}


}  // namespace mgk::tune
