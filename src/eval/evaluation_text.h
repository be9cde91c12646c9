// The human-readable form of an evaluation: a table per size and a verdict line.
#pragma once
#include <string>

#include "results/eval_result.h"

namespace mgk::eval {

std::string format_report(const results::EvalResult& r, const std::string& gpu_model);

// "1.23 µs" / "456 µs" / "7.8 ms" with three significant digits.
std::string format_us(double us);

}  // namespace mgk::eval
