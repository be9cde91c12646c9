// How a candidate process that its system-call filter stopped ends, as the launcher reads
// it (src/eval/launcher.cc) and the filter writes it (sandbox/candidate/syscall_filter.cc):
// this exit status, and a last line on stderr
//   "mgk-candidate: refused: system call 'NAME' (number N): WHY (rule: ID)"
// where ID is the class of src/eval/candidate_rules.h the model's feedback quotes.
#pragma once

namespace mgk::wire {

constexpr int kCandidateRefusedExit = 97;
constexpr const char* kCandidateRefusedPrefix = "mgk-candidate: refused: ";
constexpr const char* kCandidateRefusedRule = " (rule: ";

}  // namespace mgk::wire
