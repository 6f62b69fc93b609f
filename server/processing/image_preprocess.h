// The whole image stage for one encoded image: decode, resize (center-crop or letterbox),
// normalize ((pixel * scale - mean[c]) / std[c]) and lay out (NCHW or NHWC) into the model's
// FP32 input for one batch item.
#pragma once

#include <string_view>

#include "osprey/status.h"
#include "processing/preprocess_config.h"

namespace osprey::server::processing {

// Writes spec.elements_per_image() floats to `out`.
Status preprocess_image(std::string_view encoded, const ImagePreprocessSpec& spec, float* out);

// The normalize-and-layout step alone (image already spec.width x spec.height).
void normalize_into(const ImageF& image, const ImagePreprocessSpec& spec, float* out);

}  // namespace osprey::server::processing
