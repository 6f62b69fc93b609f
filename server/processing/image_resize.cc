#include "processing/image_resize.h"

#include <algorithm>
#include <cmath>

namespace osprey::server::processing {
namespace {

struct Tap {
  int i0, i1;
  float w1;  // weight of i1; i0 gets 1 - w1
};

std::vector<Tap> taps(int in, int out) {
  std::vector<Tap> t(static_cast<size_t>(out));
  const double scale = static_cast<double>(in) / out;
  for (int o = 0; o < out; ++o) {
    double s = (o + 0.5) * scale - 0.5;
    s = std::clamp(s, 0.0, static_cast<double>(in - 1));
    const int i0 = static_cast<int>(std::floor(s));
    const int i1 = std::min(i0 + 1, in - 1);
    t[static_cast<size_t>(o)] = {i0, i1, static_cast<float>(s - i0)};
  }
  return t;
}

}  // namespace

ImageF to_float(const Image8& image) {
  ImageF out{image.width, image.height,
             std::vector<float>(image.pixels.begin(), image.pixels.end())};
  return out;
}

ImageF resize_bilinear(const ImageF& image, int out_width, int out_height) {
  ImageF out{out_width, out_height,
             std::vector<float>(static_cast<size_t>(out_width) * out_height * kChannels)};
  const auto xs = taps(image.width, out_width);
  const auto ys = taps(image.height, out_height);
  const size_t in_stride = static_cast<size_t>(image.width) * kChannels;
  for (int y = 0; y < out_height; ++y) {
    const Tap& ty = ys[static_cast<size_t>(y)];
    const float* r0 = image.pixels.data() + ty.i0 * in_stride;
    const float* r1 = image.pixels.data() + ty.i1 * in_stride;
    float* dst = out.pixels.data() + static_cast<size_t>(y) * out_width * kChannels;
    for (int x = 0; x < out_width; ++x) {
      const Tap& tx = xs[static_cast<size_t>(x)];
      for (int c = 0; c < kChannels; ++c) {
        const float top =
            r0[tx.i0 * kChannels + c] * (1 - tx.w1) + r0[tx.i1 * kChannels + c] * tx.w1;
        const float bottom =
            r1[tx.i0 * kChannels + c] * (1 - tx.w1) + r1[tx.i1 * kChannels + c] * tx.w1;
        dst[x * kChannels + c] = top * (1 - ty.w1) + bottom * ty.w1;
      }
    }
  }
  return out;
}

ImageF resize_center_crop(const ImageF& image, int shorter, int crop_width, int crop_height) {
  int w = shorter, h = shorter;
  if (image.width < image.height)
    h = static_cast<int>(static_cast<int64_t>(shorter) * image.height / image.width);
  else if (image.height < image.width)
    w = static_cast<int>(static_cast<int64_t>(shorter) * image.width / image.height);
  w = std::max(w, crop_width);
  h = std::max(h, crop_height);
  ImageF resized = resize_bilinear(image, w, h);
  // Half to even, as Python's round() in torchvision's center_crop.
  const int left = static_cast<int>(std::nearbyint((w - crop_width) / 2.0));
  const int top = static_cast<int>(std::nearbyint((h - crop_height) / 2.0));
  ImageF out{crop_width, crop_height,
             std::vector<float>(static_cast<size_t>(crop_width) * crop_height * kChannels)};
  for (int y = 0; y < crop_height; ++y) {
    const float* src =
        resized.pixels.data() + (static_cast<size_t>(y + top) * w + left) * kChannels;
    std::copy(src, src + static_cast<size_t>(crop_width) * kChannels,
              out.pixels.data() + static_cast<size_t>(y) * crop_width * kChannels);
  }
  return out;
}

ImageF letterbox(const ImageF& image, int width, int height, float pad) {
  const double scale = std::min(static_cast<double>(width) / image.width,
                                static_cast<double>(height) / image.height);
  const int w = std::clamp(static_cast<int>(std::lround(image.width * scale)), 1, width);
  const int h = std::clamp(static_cast<int>(std::lround(image.height * scale)), 1, height);
  ImageF resized = resize_bilinear(image, w, h);
  ImageF out{width, height,
             std::vector<float>(static_cast<size_t>(width) * height * kChannels, pad)};
  const int left = (width - w) / 2;
  const int top = (height - h) / 2;
  for (int y = 0; y < h; ++y) {
    const float* src = resized.pixels.data() + static_cast<size_t>(y) * w * kChannels;
    std::copy(src, src + static_cast<size_t>(w) * kChannels,
              out.pixels.data() + (static_cast<size_t>(y + top) * width + left) * kChannels);
  }
  return out;
}

}  // namespace osprey::server::processing
