// SHA-256 (FIPS 180-4), for content-addressing kernel sources in the store.
#pragma once
#include <string>
#include <string_view>

namespace mgk::store {

// The digest of `data` as 64 lowercase hex characters.
std::string sha256_hex(std::string_view data);

}  // namespace mgk::store
