// The conversation of an attempt as the store keeps it and as a resumed session rebuilds
// it. Each stored turn holds the messages that were new when its request was sent (turn 0:
// the system prompt and the problem; later turns: the previous turn's feedback), then the
// model's reply and the tool's feedback, so concatenating the turns gives back the exact
// conversation without storing it again at every turn.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/provider.h"
#include "store/records.h"

namespace mgk::agent {

// A reply as the conversation sent next holds it: itself, or "(empty reply)" where it has no
// text (a refusal, a reply that was all reasoning), since Anthropic refuses an empty
// assistant message anywhere but last.
std::string reply_as_sent(const std::string& reply);

struct Conversation {
  std::string system;
  std::vector<llm::Message> messages;  // user/assistant, alternating, ending with a user one
  // The last turn's reply was stored but never acted on (a kill while its kernel was
  // judged): the messages end with that reply, which the resumed session acts on first.
  bool last_reply_pending = false;
};

// The JSON array stored as a turn's messages: [{"role", "content"}, ...]; the system prompt
// (turn 0 only, when non-empty) first with role "system".
nlohmann::json new_messages_json(const std::string& system, const std::vector<llm::Message>& added);

// Rebuilds the conversation to continue from stored turns (ordered by index). Throws
// mgk::Error when they do not form one (no system prompt in turn 0, a gap in the indices,
// a last turn without feedback to send next, a pending turn before the last).
Conversation rebuild_conversation(const std::vector<store::TurnRecord>& turns);

}  // namespace mgk::agent
