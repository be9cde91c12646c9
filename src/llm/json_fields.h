// Reading fields of a vendor's JSON reply defensively: absent and null are "not there",
// a wrong type is a ReplyShapeError naming the field.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace mgk::llm {

// The object at obj[key]; throws ReplyShapeError naming `path` if it is not an object.
const nlohmann::json& object_field(const nlohmann::json& obj, const char* key,
                                   const std::string& path);

// obj[key] as a token count; 0 when absent or null (or when obj itself is not an object).
int64_t count_field(const nlohmann::json& obj, const char* key, const std::string& path);

// obj[key] as a string; "" when absent or null.
std::string string_field(const nlohmann::json& obj, const char* key, const std::string& path);

// Parses a whole reply body as a JSON object; ReplyShapeError if it is not one.
nlohmann::json parse_reply_object(const std::string& body);

// A 2xx body that carries {"error": ...} instead of a reply: throws ReplyShapeError with it.
void reject_error_object(const nlohmann::json& reply);

}  // namespace mgk::llm
