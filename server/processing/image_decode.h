// JPEG (libjpeg-turbo) and PNG (libpng) decoding into 8-bit RGB, with explicit limits checked
// before any pixel buffer is allocated. Gray images are replicated to RGB; an alpha channel is
// dropped (not composited); 16-bit PNG samples are reduced to 8 bits; palette PNGs are expanded.
// Corrupt, truncated or unsupported data is kInvalidArgument saying what was wrong; neither
// library is ever allowed to exit the process (both use setjmp/longjmp error handlers).
#pragma once

#include <cstdint>
#include <string_view>

#include "osprey/status.h"
#include "processing/image.h"

namespace osprey::server::processing {

struct DecodeLimits {
  int64_t max_bytes = int64_t{16} << 20;  // encoded size
  int64_t max_pixels = 40'000'000;        // width * height
};

enum class ImageFormat { kUnknown, kJpeg, kPng };

// From the first bytes (JPEG: FF D8 FF; PNG: the 8-byte signature).
ImageFormat sniff_format(std::string_view bytes);

// Decodes JPEG or PNG by its signature; anything else is kInvalidArgument.
Result<Image8> decode_image(std::string_view bytes, const DecodeLimits& limits);

Result<Image8> decode_jpeg(std::string_view bytes, const DecodeLimits& limits);
Result<Image8> decode_png(std::string_view bytes, const DecodeLimits& limits);

// Shared by both decoders: refuses empty or over-limit dimensions.
Status check_dimensions(const char* format, int64_t width, int64_t height,
                        const DecodeLimits& limits);

}  // namespace osprey::server::processing
