// Shared by the fuzz harnesses: load a model from untrusted bytes with tight limits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "osprey/session.h"

namespace osprey::fuzz {

inline SessionOptions fuzz_options() {
  SessionOptions options;
  options.max_tensor_elements = 1 << 16;  // keep each case small and fast
  options.memory_limit_bytes = 64 << 20;
  options.external_data_dir = "/nonexistent";  // never read files next to the corpus
  return options;
}

inline Result<std::unique_ptr<Session>> load(const uint8_t* data, size_t size) {
  return Session::load_from_bytes(std::string(reinterpret_cast<const char*>(data), size), fuzz_options());
}

}  // namespace osprey::fuzz
