#include "processing/image_preprocess.h"

#include "processing/image_resize.h"

namespace osprey::server::processing {

void normalize_into(const ImageF& image, const ImagePreprocessSpec& spec, float* out) {
  const size_t plane = static_cast<size_t>(image.width) * image.height;
  for (int c = 0; c < kChannels; ++c) {
    // Output channel c takes decoded (RGB) channel c, or 2 - c for BGR.
    const int src_c = spec.color == ColorOrder::kRGB ? c : kChannels - 1 - c;
    const float mul = spec.scale / spec.std[static_cast<size_t>(c)];
    const float add = -spec.mean[static_cast<size_t>(c)] / spec.std[static_cast<size_t>(c)];
    for (size_t i = 0; i < plane; ++i) {
      const float v = image.pixels[i * kChannels + static_cast<size_t>(src_c)] * mul + add;
      if (spec.layout == Layout::kNCHW)
        out[static_cast<size_t>(c) * plane + i] = v;
      else
        out[i * kChannels + static_cast<size_t>(c)] = v;
    }
  }
}

Status preprocess_image(std::string_view encoded, const ImagePreprocessSpec& spec, float* out) {
  OSPREY_ASSIGN_OR_RETURN(Image8 decoded, decode_image(encoded, spec.limits));
  ImageF image = to_float(decoded);
  decoded.pixels = {};
  ImageF sized = spec.resize == ResizeMode::kCenterCrop
                     ? resize_center_crop(image, spec.resize_shorter, spec.width, spec.height)
                     : letterbox(image, spec.width, spec.height, spec.pad);
  normalize_into(sized, spec, out);
  return Status::Ok();
}

}  // namespace osprey::server::processing
