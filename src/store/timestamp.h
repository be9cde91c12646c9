// Timestamps as the store keeps them: ISO 8601 UTC text with milliseconds
// ("2026-01-05T12:34:56.789Z"), which sorts chronologically as a string.
#pragma once
#include <string>

namespace mgk::store {

std::string utc_now();

// A user's --since/--until bound ("2026-01-05", "2026-01-05T12:30", "2026-01-05 12:30:15",
// all UTC) as a stored-format timestamp. A date alone means the start of that day when
// `end_of_period` is false, its last millisecond when true; likewise for a minute.
// Throws mgk::UsageError naming the accepted forms.
std::string timestamp_bound(const std::string& text, bool end_of_period);

// "2026-01-05T12:34:56.789Z" -> "2026-01-05 12:34" for tables.
std::string short_time(const std::string& timestamp);

}  // namespace mgk::store
