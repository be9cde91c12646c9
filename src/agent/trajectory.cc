#include "agent/trajectory.h"

#include "common/error.h"

namespace mgk::agent {

std::string reply_as_sent(const std::string& reply) {
  return reply.find_first_not_of(" \t\r\n") == std::string::npos ? "(empty reply)" : reply;
}

nlohmann::json new_messages_json(const std::string& system, const std::vector<llm::Message>& added) {
  nlohmann::json j = nlohmann::json::array();
  if (!system.empty()) j.push_back({{"role", "system"}, {"content", system}});
  for (const auto& m : added) j.push_back({{"role", m.role}, {"content", m.content}});
  return j;
}

Conversation rebuild_conversation(const std::vector<store::TurnRecord>& turns) {
  Conversation c;
  for (size_t i = 0; i < turns.size(); ++i) {
    const store::TurnRecord& t = turns[i];
    if (t.index != int(i))
      throw Error("the stored turns of attempt " + std::to_string(t.attempt_id) +
                  " have a gap at index " + std::to_string(i) + "; cannot resume it");
    for (const auto& m : t.messages) {
      std::string role = m.value("role", "");
      std::string content = m.value("content", "");
      if (role == "system") {
        c.system = content;
      } else {
        c.messages.push_back({role, content});
      }
    }
    c.messages.push_back({"assistant", reply_as_sent(t.reply)});
  }
  if (turns.empty()) return c;
  if (c.system.empty())
    throw Error("the first stored turn of attempt " + std::to_string(turns[0].attempt_id) +
                " has no system prompt; cannot resume it");
  for (size_t i = 0; i + 1 < turns.size(); ++i)
    if (turns[i].action == store::kTurnPending)
      throw Error("turn " + std::to_string(i) + " of attempt " + std::to_string(turns[i].attempt_id) +
                  " was never acted on, yet later turns follow it; cannot resume it");
  c.last_reply_pending = turns.back().action == store::kTurnPending;
  if (c.last_reply_pending) return c;
  if (turns.back().feedback.empty())
    throw Error("the last turn of attempt " + std::to_string(turns.back().attempt_id) +
                " has no feedback to continue from (was it submitted?)");
  c.messages.push_back({"user", turns.back().feedback});
  return c;
}

}  // namespace mgk::agent
