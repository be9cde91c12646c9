#include "store/timestamp.h"

#include <chrono>
#include <ctime>
#include <regex>

#include "common/error.h"

namespace mgk::store {

std::string utc_now() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t seconds = std::time_t(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[96];  // room for any int the compiler imagines in tm
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms % 1000));
  return buf;
}

std::string timestamp_bound(const std::string& text, bool end_of_period) {
  static const std::regex form(
      R"(^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?Z?$)");
  std::smatch m;
  if (!std::regex_match(text, m, form))
    throw UsageError("cannot read the date '" + text +
                     "': use YYYY-MM-DD, YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS (UTC)");
  int month = std::stoi(m[2]), day = std::stoi(m[3]);
  if (month < 1 || month > 12 || day < 1 || day > 31)
    throw UsageError("the date '" + text + "' has no such month or day");
  std::string out = m[1].str() + "-" + m[2].str() + "-" + m[3].str() + "T";
  const char* fill = end_of_period ? "59" : "00";
  out += m[4].matched ? m[4].str() : (end_of_period ? "23" : "00");
  out += ":" + (m[5].matched ? m[5].str() : std::string(fill));
  out += ":" + (m[6].matched ? m[6].str() : std::string(fill));
  out += end_of_period ? ".999Z" : ".000Z";
  return out;
}

std::string short_time(const std::string& timestamp) {
  if (timestamp.size() < 16) return timestamp;
  std::string out = timestamp.substr(0, 16);
  out[10] = ' ';
  return out;
}

}  // namespace mgk::store
