// Synthetic objectives for the tuner tests: known optimum, failing regions and a deceptive
// basin, no GPU. Shared by the strategy and tuner tests.
#pragma once
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tune/markers.h"
#include "tune/objective.h"
#include "tune/space.h"

namespace mgk::tune::test {

// Four parameters of 12 values each (20,736 configurations).
inline SearchSpace landscape_space() {
  return parse_markers(
      "// mgk:tune A range(0, 11)\n"
      "// mgk:tune B range(0, 11)\n"
      "// mgk:tune C range(0, 11)\n"
      "// mgk:tune D range(0, 11)\n",
      "landscape.cu");
}

// The landscape over landscape_space(), by value index:
//  - the global optimum 10 µs at (9, 3, 7, 5) in a bowl;
//  - a deceptive basin at (2, 10, 1, 9): wider and shallower, bottoming out at 11 µs, where
//    more than half of the space slopes towards it;
//  - A + B > 18 fails to launch, C == 11 does not compile, and (A, D) == (0, 0) is a fast
//    wrong configuration (incorrect, with a tempting time).
struct Landscape {
  static constexpr int kOptimum[4] = {9, 3, 7, 5};
  static constexpr int kDecoy[4] = {2, 10, 1, 9};
  static constexpr double kOptimumUs = 10.0;

  static Measurement measure(const Config& c) {
    Measurement m;
    if (c[0] + c[1] > 18) {
      m.status = TrialStatus::kLaunch;
      m.message = "too many resources requested for launch";
      return m;
    }
    if (c[2] == 11) {
      m.status = TrialStatus::kCompile;
      m.message = "kernel.cu(3): error: shared memory exceeds the limit";
      return m;
    }
    if (c[0] == 0 && c[3] == 0) {
      m.status = TrialStatus::kIncorrect;
      m.time_us = 0.5;  // fast and wrong: must never win
      m.message = "out: rank 0, index 7: got 0, expected 3.5";
      return m;
    }
    double d_opt = 0, d_decoy = 0;
    for (int k = 0; k < 4; ++k) {
      d_opt += 0.3 * (int(c[k]) - kOptimum[k]) * (int(c[k]) - kOptimum[k]);
      d_decoy += 0.15 * (int(c[k]) - kDecoy[k]) * (int(c[k]) - kDecoy[k]);
    }
    m.status = TrialStatus::kOk;
    m.time_us = std::min(kOptimumUs + d_opt, 11.0 + d_decoy);
    return m;
  }

  static bool is_optimum(const Config& c) {
    for (int k = 0; k < 4; ++k)
      if (int(c[k]) != kOptimum[k]) return false;
    return true;
  }
};

// A clock that moves only when told to.
class FakeClock : public Clock {
 public:
  double now_seconds() override { return now; }
  double now = 1000.0;
};

// An Objective calling a function, counting measurements and preparations; each
// measurement advances `clock` (if any) by `seconds_per_measure`.
class FunctionObjective : public Objective {
 public:
  using Function = std::function<Measurement(const Config&)>;
  explicit FunctionObjective(Function f, FakeClock* clock = nullptr,
                             double seconds_per_measure = 0)
      : f_(std::move(f)), clock_(clock), seconds_per_measure_(seconds_per_measure) {}

  void prepare(const Config&) override { ++prepared; }
  Measurement measure(const Config& c) override {
    measured.push_back(c);
    if (clock_) clock_->now += seconds_per_measure_;
    return f_(c);
  }

  std::atomic<int> prepared{0};  // from the prefetch thread
  std::vector<Config> measured;

 private:
  Function f_;
  FakeClock* clock_;
  double seconds_per_measure_;
};

}  // namespace mgk::tune::test
