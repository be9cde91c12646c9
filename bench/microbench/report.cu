// mgk-microbench output: a compact table per GPU pair, and the CSV of every sample.
#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "microbench.h"

namespace mgk::bench {
namespace {

std::string human_bytes(size_t b) {
  char buf[32];
  if (b >= (size_t(1) << 30) && b % (size_t(1) << 30) == 0) std::snprintf(buf, sizeof buf, "%zuG", b >> 30);
  else if (b >= (size_t(1) << 20) && b % (size_t(1) << 20) == 0) std::snprintf(buf, sizeof buf, "%zuM", b >> 20);
  else if (b >= (size_t(1) << 10) && b % (size_t(1) << 10) == 0) std::snprintf(buf, sizeof buf, "%zuK", b >> 10);
  else std::snprintf(buf, sizeof buf, "%zu", b);
  return buf;
}

// The best sample of one (pair, mechanism, size), and the fewest SMs reaching 90% of it.
struct Best {
  const Sample* best = nullptr;
  int sms_for_90 = 0;
};

Best best_of(const std::vector<const Sample*>& group) {
  Best r;
  for (const Sample* s : group)
    if (!r.best || s->gbps > r.best->gbps) r.best = s;
  r.sms_for_90 = r.best ? r.best->sms : 0;
  for (const Sample* s : group)
    if (s->gbps >= 0.9 * r.best->gbps && s->sms < r.sms_for_90) r.sms_for_90 = s->sms;
  return r;
}

}  // namespace

void print_summary(const std::vector<Sample>& samples) {
  using Key = std::tuple<int, int, size_t, int>;  // src, dst, bytes, mechanism
  std::map<Key, std::vector<const Sample*>> groups;
  std::map<std::pair<int, int>, std::vector<size_t>> sizes;
  for (const Sample& s : samples) {
    groups[Key{s.src, s.dst, s.bytes, int(s.mechanism)}].push_back(&s);
    auto& v = sizes[{s.src, s.dst}];
    if (std::find(v.begin(), v.end(), s.bytes) == v.end()) v.push_back(s.bytes);
  }
  for (auto& [pair, list] : sizes) {
    std::printf("\nGPU %d -> GPU %d: best GB/s over SM counts, time per transfer (us), and @N = fewest SMs\n"
                "reaching 90%% of that best (copy engine: no SMs). '!' marks data that failed verification.\n",
                pair.first, pair.second);
    std::printf("%8s", "size");
    for (Mechanism m : kMechanisms) std::printf(" | %-26s", mechanism_name(m));
    std::printf("\n");
    for (size_t bytes : list) {
      std::printf("%8s", human_bytes(bytes).c_str());
      for (Mechanism m : kMechanisms) {
        auto it = groups.find(Key{pair.first, pair.second, bytes, int(m)});
        if (it == groups.end()) {
          std::printf(" | %-26s", "-");
          continue;
        }
        const Best b = best_of(it->second);
        bool failed = false;
        for (const Sample* s : it->second) failed = failed || s->verified == 0;
        char cell[64];
        if (uses_sms(m))
          std::snprintf(cell, sizeof cell, "%7.1f %9.1fus @%-3d%s", b.best->gbps, b.best->us, b.sms_for_90,
                        failed ? "!" : "");
        else
          std::snprintf(cell, sizeof cell, "%7.1f %9.1fus%s", b.best->gbps, b.best->us, failed ? "!" : "");
        std::printf(" | %-26s", cell);
      }
      std::printf("\n");
    }
  }
}

bool write_csv(const std::vector<Sample>& samples, const std::string& path, std::string* error) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    *error = "cannot write " + path;
    return false;
  }
  std::fprintf(f, "src_gpu,dst_gpu,mechanism,sms,bytes,iterations,time_us,gbps,verified\n");
  for (const Sample& s : samples)
    std::fprintf(f, "%d,%d,%s,%d,%zu,%d,%.3f,%.3f,%s\n", s.src, s.dst, mechanism_name(s.mechanism), s.sms, s.bytes,
                 s.iterations, s.us, s.gbps, s.verified < 0 ? "" : s.verified ? "yes" : "no");
  const bool ok = std::fclose(f) == 0;
  if (!ok) *error = "error while writing " + path;
  return ok;
}

}  // namespace mgk::bench
