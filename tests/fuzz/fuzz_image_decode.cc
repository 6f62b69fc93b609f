// Feeds arbitrary bytes to the JPEG and PNG decoders. The first byte picks the decoder (its low
// bit) and whether to prepend that format's signature (so that mutations reach past it); the
// rest is the file. Any crash, hang, exit or sanitizer report is a bug: bad data must come back
// as a Status.
#include <cstddef>
#include <cstdint>
#include <string>

#include "processing/image_decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool jpeg = (data[0] & 1) != 0;
  const bool add_signature = (data[0] & 2) != 0;
  std::string bytes;
  if (add_signature)
    bytes = jpeg ? std::string("\xFF\xD8\xFF", 3) : std::string("\x89PNG\r\n\x1A\n", 8);
  bytes.append(reinterpret_cast<const char*>(data + 1), size - 1);
  osprey::server::processing::DecodeLimits limits;
  limits.max_pixels = 1 << 20;  // keep each case small and fast
  limits.max_bytes = 1 << 20;
  auto image = jpeg ? osprey::server::processing::decode_jpeg(bytes, limits)
                    : osprey::server::processing::decode_png(bytes, limits);
  if (image.ok() && image->pixels.size() != static_cast<size_t>(image->width) * image->height * 3)
    __builtin_trap();  // a decoded image must hold exactly its pixels
  return 0;
}
