// An 8-bit or float image held row-major, channels interleaved (HWC), as the pre-processing
// stages pass it along: decode -> resize/crop/letterbox -> normalize and lay out.
#pragma once

#include <cstdint>
#include <vector>

namespace osprey::server::processing {

// Decoded pixels: 3 channels (RGB), 8 bits each, HWC.
struct Image8 {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;  // height * width * 3
};

// Resampled pixels, still in 0..255 units (no rounding back to 8 bits), HWC, 3 channels.
struct ImageF {
  int width = 0;
  int height = 0;
  std::vector<float> pixels;  // height * width * 3
};

constexpr int kChannels = 3;

}  // namespace osprey::server::processing
