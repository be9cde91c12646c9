// What `mgk generate` prints: a line of text per event, or with --json one JSON object a line.
#pragma once
#include <cstdint>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/agent.h"
#include "llm/provider.h"

namespace mgk::generate {

// What generate prints: a line of text, or with --json the same as one JSON object a line
// (flushed: progress is shown as it happens, also through a pipe).
struct Printer {
  bool json = false;
  void operator()(const std::string& text, const nlohmann::json& event) const {
    if (json) std::cout << event.dump() << std::endl;
    else std::cout << text << std::endl;
  }
};


// "$0.0123"
std::string money(double usd);
// "950", "12.3k"
std::string tokens(int64_t n);
// A cost, or null where the model has no price.
nlohmann::json usd_or_null(bool priced, double usd);

// Says before the first call how the model's replies will be billed.
void announce_price(const llm::Provider& provider);

// The session's end: how it ended, the final kernel's verdict, the best kernel, the attempt.
void print_outcome(const agent::AttemptOutcome& out, int64_t run_id, bool priced, const Printer& print);

}  // namespace mgk::generate
