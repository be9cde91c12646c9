// Command-line parsing of mgk-microbench.
#include <cstdlib>
#include <cstring>

#include "microbench.h"

namespace mgk::bench {
namespace {

// "1K", "64M", "1G", "4096": bytes; false when malformed.
bool parse_bytes(const char* text, size_t* out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text) return false;
  unsigned long long scale = 1;
  if (*end == 'K' || *end == 'k') scale = 1ull << 10, ++end;
  else if (*end == 'M' || *end == 'm') scale = 1ull << 20, ++end;
  else if (*end == 'G' || *end == 'g') scale = 1ull << 30, ++end;
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0' || v == 0) return false;
  *out = size_t(v * scale);
  return true;
}

// "0:1,1:0"
bool parse_pairs(const char* text, std::vector<std::pair<int, int>>* out) {
  const char* p = text;
  while (*p) {
    char* end = nullptr;
    const long a = std::strtol(p, &end, 10);
    if (end == p || *end != ':') return false;
    p = end + 1;
    const long b = std::strtol(p, &end, 10);
    if (end == p || a < 0 || b < 0 || a == b) return false;
    out->emplace_back(int(a), int(b));
    p = end;
    if (*p == ',') ++p;
    else if (*p) return false;
  }
  return !out->empty();
}

}  // namespace

std::string usage() {
  return "usage: mgk-microbench [--pairs A:B[,C:D...]] [--min-bytes N] [--max-bytes N] [--quick] [--csv FILE]\n"
         "  Measures GPU-to-GPU bandwidth and latency per transfer mechanism (copy engine, TMA bulk\n"
         "  stores, 16-byte register stores, 16-byte register loads), message size and SM count.\n"
         "  --pairs      ordered GPU pairs (default: every pair with peer access)\n"
         "  --min-bytes  smallest message (default 1K); sizes grow x4 (x16 with --quick)\n"
         "  --max-bytes  largest message (default 1G); suffixes K, M, G\n"
         "  --quick      fewer sizes, SM counts and repeats\n"
         "  --csv FILE   write every sample as CSV (plot with bench/plot_microbench.py)\n";
}

bool parse_options(int argc, char** argv, Options* o, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        *error = std::string(name) + " needs a value";
        return nullptr;
      }
      return argv[++i];
    };
    if (!std::strcmp(arg, "--quick")) {
      o->quick = true;
    } else if (!std::strcmp(arg, "--pairs")) {
      const char* v = value(arg);
      if (!v) return false;
      if (!parse_pairs(v, &o->pairs)) return *error = "--pairs wants A:B[,C:D...] with A != B, e.g. 0:1", false;
    } else if (!std::strcmp(arg, "--min-bytes") || !std::strcmp(arg, "--max-bytes")) {
      const char* v = value(arg);
      if (!v) return false;
      size_t* target = arg[2] == 'm' && arg[3] == 'i' ? &o->min_bytes : &o->max_bytes;
      if (!parse_bytes(v, target)) return *error = std::string(arg) + " wants a size like 4096, 64K, 16M or 1G", false;
    } else if (!std::strcmp(arg, "--csv")) {
      const char* v = value(arg);
      if (!v) return false;
      o->csv = v;
    } else if (!std::strcmp(arg, "--help") || !std::strcmp(arg, "-h")) {
      *error = "";
      return false;
    } else {
      *error = std::string("unknown option '") + arg + "'";
      return false;
    }
  }
  if (o->min_bytes % 16 || o->max_bytes % 16)
    return *error = "--min-bytes and --max-bytes must be multiples of 16", false;
  if (o->min_bytes > o->max_bytes) return *error = "--min-bytes is larger than --max-bytes", false;
  return true;
}

}  // namespace mgk::bench
