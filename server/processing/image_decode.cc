#include "processing/image_decode.h"

#include <cstring>

namespace osprey::server::processing {

ImageFormat sniff_format(std::string_view bytes) {
  static const unsigned char kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (bytes.size() >= 3 && static_cast<unsigned char>(bytes[0]) == 0xFF &&
      static_cast<unsigned char>(bytes[1]) == 0xD8 && static_cast<unsigned char>(bytes[2]) == 0xFF)
    return ImageFormat::kJpeg;
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kPng, 8) == 0) return ImageFormat::kPng;
  return ImageFormat::kUnknown;
}

Status check_dimensions(const char* format, int64_t width, int64_t height,
                        const DecodeLimits& limits) {
  if (width <= 0 || height <= 0)
    return invalid_argument(format, " image has empty dimensions ", width, "x", height);
  if (width * height > limits.max_pixels)
    return invalid_argument(format, " image of ", width, "x", height,
                            " pixels is over the limit of ", limits.max_pixels, " pixels");
  return Status::Ok();
}

Result<Image8> decode_image(std::string_view bytes, const DecodeLimits& limits) {
  if (bytes.empty()) return invalid_argument("image is empty (0 bytes)");
  if (static_cast<int64_t>(bytes.size()) > limits.max_bytes)
    return invalid_argument("image of ", bytes.size(), " bytes is over the limit of ",
                            limits.max_bytes, " bytes");
  switch (sniff_format(bytes)) {
    case ImageFormat::kJpeg: return decode_jpeg(bytes, limits);
    case ImageFormat::kPng: return decode_png(bytes, limits);
    case ImageFormat::kUnknown: break;
  }
  return invalid_argument("image is neither JPEG nor PNG (unrecognized signature)");
}

}  // namespace osprey::server::processing
