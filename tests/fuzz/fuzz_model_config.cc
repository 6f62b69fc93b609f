// Feeds arbitrary bytes to the config.pbtxt parser and validator (no files are touched).
// Any crash, hang or sanitizer report is a bug: a bad config must come back as a Status.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/model_config_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = osprey::server::parse_model_config(text, "fuzz/config.pbtxt");
  if (!config.ok()) return 0;
  if (osprey::server::validate_model_config("fuzz", &config.value()).ok())
    (void)osprey::server::model_config_to_json(config.value());
  return 0;
}
