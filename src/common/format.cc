#include "common/format.h"

#include <cstdio>

namespace mgk {

std::string fixed(double v, int digits) {
  char buf[64];  // room for any double printed with the few digits tables use
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace mgk
