#include "eval/candidate_rules.h"

#include <stdexcept>

namespace mgk::eval {

namespace {

const RuleInfo kRules[] = {
    {Rule::kNccl, "nccl", "candidates may not call NCCL: the task is to replace it"},
    {Rule::kMulticast, "multicast", "NVLink multicast (multimem PTX, cuMulticast*) is off on these machines and must stay off"},
    {Rule::kCodeLoading, "code-loading", "candidates may not load or look up code at run time"},
    {Rule::kOracle, "oracle", "candidates may not define or call the oracle"},
    {Rule::kDeviceReset, "device-reset", "resetting the device destroys the harness's state"},
    {Rule::kProcesses, "processes", "candidates may not start processes"},
    {Rule::kThreads, "threads", "candidates may not start threads"},
    {Rule::kSystemCalls, "system-calls", "candidates may not make raw system calls"},
    {Rule::kMemoryMapping, "memory-mapping", "candidates may not map memory or change its protection"},
    {Rule::kSockets, "sockets", "candidates may not use sockets"},
    {Rule::kProcessControl, "process-control", "candidates may not control processes or the system"},
    {Rule::kFiles, "files", "candidates may not use the file system"},
    {Rule::kLinking, "linking",
     "candidates may link and call only the CUDA runtime and driver, cuBLAS, cuBLASLt, cuFFT and the basics of libc, libm "
     "and libstdc++"},
    {Rule::kShadowing, "shadowing", "candidates may not replace the functions of the libraries they call"},
    {Rule::kHiddenCode, "hidden-code", "candidates may not make raw system calls or hide code from the checks"},
};

}  // namespace

std::span<const RuleInfo> candidate_rules() { return kRules; }

const RuleInfo& rule_info(Rule rule) {
  for (const auto& r : kRules)
    if (r.rule == rule) return r;
  throw std::logic_error("candidate_rules: a Rule without its entry");
}

}  // namespace mgk::eval
