// Reading the error object a vendor puts in a failed reply, and the two conditions that
// must never be retried although their status says "try again later" or "bad request":
// an exhausted quota and an overflowing context.
#pragma once
#include <string>

namespace mgk::llm {

// The fields found in {"error": {"type","code","message"}} (OpenAI, Anthropic, vLLM),
// {"error": "text"} (Ollama), {"object": "error", "message", ...} (older vLLM) or
// {"detail": ...} (FastAPI servers). Anything else leaves them empty.
struct VendorError {
  std::string type;
  std::string code;     // a string code, or a numeric one printed
  std::string message;
  // The most specific name of the error: code if set, else type.
  std::string name() const { return code.empty() ? type : code; }
};

VendorError parse_vendor_error(const std::string& body);

// The account's spend limit or credits are used up (OpenAI insufficient_quota, HTTP 402,
// Anthropic's "credit balance is too low" / "usage limits").
bool is_quota_exhausted(int status, const VendorError& error);

// The prompt (plus max_tokens) does not fit the model's context window.
bool is_context_overflow(int status, const VendorError& error);

}  // namespace mgk::llm
