#include "llm/json_fields.h"

#include "llm/api_error.h"

namespace mgk::llm {

using nlohmann::json;

const json& object_field(const json& obj, const char* key, const std::string& path) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_object())
    throw ReplyShapeError("has no object " + path);
  return obj[key];
}

int64_t count_field(const json& obj, const char* key, const std::string& path) {
  if (!obj.is_object() || !obj.contains(key) || obj[key].is_null()) return 0;
  const json& v = obj[key];
  if (!v.is_number()) throw ReplyShapeError("has a non-numeric " + path);
  return v.get<int64_t>();
}

std::string string_field(const json& obj, const char* key, const std::string& path) {
  if (!obj.is_object() || !obj.contains(key) || obj[key].is_null()) return "";
  const json& v = obj[key];
  if (!v.is_string()) throw ReplyShapeError("has a non-string " + path);
  return v.get<std::string>();
}

json parse_reply_object(const std::string& body) {
  if (body.empty()) throw ReplyShapeError("is empty");
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw ReplyShapeError("is not valid JSON");
  if (!j.is_object()) throw ReplyShapeError("is not a JSON object");
  return j;
}

void reject_error_object(const json& reply) {
  if (!reply.contains("error") || reply["error"].is_null()) return;
  const json& e = reply["error"];
  bool has_message = e.is_object() && e.contains("message") && e["message"].is_string();
  std::string text = has_message ? e["message"].get<std::string>() : e.dump();
  throw ReplyShapeError("carries an error instead of a reply: " + text);
}

}  // namespace mgk::llm
