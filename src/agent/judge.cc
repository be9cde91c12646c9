#include "agent/judge.h"

#include "eval/compile_cache.h"

namespace mgk::agent {

results::EvalResult EvaluatorJudge::judge(const std::filesystem::path& kernel_file) {
  eval::EvalOptions o = options_;
  o.kernel = kernel_file;
  o.kernel_shown_as = eval::kStagedName;  // the model's kernel is kernel.cu, wherever it is written
  o.kernel_is_reference = false;
  return eval::evaluate(o);
}

}  // namespace mgk::agent
