// The config `parameters` keys the pre/post-processing stages own (header only, so that the
// config validator can accept them without linking the stages). Meanings: preprocess_config.h.
#pragma once

#include <array>
#include <string_view>

namespace osprey::server::processing {

inline constexpr std::array<std::string_view, 14> kParameterKeys = {"preprocess",
                                                                    "image_input",
                                                                    "resize",
                                                                    "size",
                                                                    "resize_shorter",
                                                                    "letterbox_pad",
                                                                    "mean",
                                                                    "std",
                                                                    "scale",
                                                                    "layout",
                                                                    "color",
                                                                    "max_image_bytes",
                                                                    "max_image_pixels",
                                                                    "classification_softmax"};

inline bool is_processing_parameter(std::string_view key) {
  for (auto k : kParameterKeys)
    if (k == key) return true;
  return false;
}

}  // namespace osprey::server::processing
