#include "agent/judge.h"

namespace mgk::agent {

eval::EvalResult EvaluatorJudge::judge(const std::filesystem::path& kernel_file) {
  eval::EvalOptions o = options_;
  o.kernel = kernel_file;
  o.kernel_is_reference = false;
  return eval::evaluate(o);
}

}  // namespace mgk::agent
