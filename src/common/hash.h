// SHA-256, for content addresses: the compile cache, deduplicated kernels, tuner keys.
#pragma once
#include <string>
#include <string_view>

namespace mgk {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view data);
  std::string hex();  // finishes; the object is spent afterwards

 private:
  void block(const unsigned char* p);
  unsigned int h_[8];
  unsigned char buf_[64];
  size_t buf_len_ = 0;
  unsigned long long total_ = 0;
};

std::string sha256_hex(std::string_view data);

}  // namespace mgk
