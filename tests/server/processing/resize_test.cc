// Bilinear resize, center crop and letterbox against hand-computed references.
#include <gtest/gtest.h>

#include "processing/image_resize.h"

namespace osprey::server::processing {
namespace {

// A 3-channel image whose channel c holds values[i] + c at pixel i (row-major).
ImageF make(int w, int h, std::vector<float> values) {
  ImageF im{w, h, {}};
  for (float v : values)
    for (int c = 0; c < kChannels; ++c) im.pixels.push_back(v + static_cast<float>(c));
  return im;
}

// Channel 0 of every pixel.
std::vector<float> channel0(const ImageF& im) {
  std::vector<float> out;
  for (size_t i = 0; i < im.pixels.size(); i += kChannels) out.push_back(im.pixels[i]);
  return out;
}

TEST(ResizeTest, UpscaleUsesHalfPixelCentersAndClampsAtTheEdges) {
  // in 2 -> out 4: sx = (x + 0.5) / 2 - 0.5 = -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to
  // 1).
  ImageF out = resize_bilinear(make(2, 1, {0, 100}), 4, 1);
  EXPECT_EQ(out.width, 4);
  EXPECT_EQ(out.height, 1);
  EXPECT_EQ(channel0(out), (std::vector<float>{0, 25, 75, 100}));
  EXPECT_FLOAT_EQ(out.pixels[1 * 3 + 2], 27);  // channel 2 = channel 0 + 2
}

TEST(ResizeTest, DownscaleSamplesBetweenPixels) {
  // in 4 -> out 2: sx = (x + 0.5) * 2 - 0.5 = 0.5, 2.5.
  ImageF out = resize_bilinear(make(4, 1, {0, 10, 20, 30}), 2, 1);
  EXPECT_EQ(channel0(out), (std::vector<float>{5, 25}));
}

TEST(ResizeTest, TwoDimensionsMixRowsAndColumns) {
  // 2x2 -> 1x1 samples the center (0.5, 0.5): the mean of the four pixels.
  ImageF out = resize_bilinear(make(2, 2, {0, 10, 20, 40}), 1, 1);
  EXPECT_EQ(channel0(out), (std::vector<float>{17.5f}));
  // 2x2 -> 2x2 is the identity.
  EXPECT_EQ(channel0(resize_bilinear(make(2, 2, {0, 10, 20, 40}), 2, 2)),
            (std::vector<float>{0, 10, 20, 40}));
}

TEST(ResizeTest, CenterCropTakesTheMiddle) {
  // 4x2, shorter side already 2: no resize, crop 2x2 at left = round(1) = 1.
  ImageF im = make(4, 2, {0, 1, 2, 3, 10, 11, 12, 13});
  ImageF out = resize_center_crop(im, 2, 2, 2);
  EXPECT_EQ(out.width, 2);
  EXPECT_EQ(out.height, 2);
  EXPECT_EQ(channel0(out), (std::vector<float>{1, 2, 11, 12}));
  // 1x3 tall, crop 1x2: top = round(0.5) = 0 (half to even, as torchvision).
  ImageF tall = make(1, 3, {5, 6, 7});
  EXPECT_EQ(channel0(resize_center_crop(tall, 1, 1, 2)), (std::vector<float>{5, 6}));
}

TEST(ResizeTest, CenterCropResizesTheShorterSideFirst) {
  // 4x2 with shorter 1: resized to 2x1 (long side 4 * 1 / 2), pixels sample x = 0.5 and 2.5 of
  // rows mixed at y = 0.5; then crop 1x1 at left round(0.5) = 0.
  ImageF im = make(4, 2, {0, 10, 20, 30, 100, 110, 120, 130});
  ImageF resized = resize_bilinear(im, 2, 1);
  EXPECT_EQ(channel0(resized), (std::vector<float>{55, 75}));
  EXPECT_EQ(channel0(resize_center_crop(im, 1, 1, 1)), (std::vector<float>{55}));
}

TEST(ResizeTest, LetterboxKeepsAspectAndPads) {
  // 4x2 into 4x4: scale 1, placed at top (4 - 2) / 2 = 1; rows 0 and 3 are padding.
  ImageF im = make(4, 2, {0, 1, 2, 3, 10, 11, 12, 13});
  ImageF out = letterbox(im, 4, 4, 7);
  EXPECT_EQ(channel0(out),
            (std::vector<float>{7, 7, 7, 7, 0, 1, 2, 3, 10, 11, 12, 13, 7, 7, 7, 7}));
  EXPECT_FLOAT_EQ(out.pixels[2], 7);  // padding is the same in every channel
  // 2x4 into 2x2: scale 0.5 -> 1x2 placed at left (2 - 1) / 2 = 0, column 1 padded.
  ImageF tall = make(2, 4, {0, 0, 10, 10, 20, 20, 30, 30});
  ImageF small = letterbox(tall, 2, 2, 0);
  EXPECT_EQ(channel0(small), (std::vector<float>{5, 0, 25, 0}));
}

}  // namespace
}  // namespace osprey::server::processing
