// JPEG and PNG decoding: pixel values, color conversions, corrupt data and limits.
#include <gtest/gtest.h>

#include <cstdlib>

#include "processing/image_decode.h"
#include "test_images.h"

namespace osprey::server::processing {
namespace {

using testing::encode_jpeg;
using testing::encode_png;
using testing::RawImage;
using testing::solid;

RawImage gradient(int w, int h, int channels) {
  RawImage im{w, h, channels, {}};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < channels; ++c)
        im.pixels.push_back(static_cast<uint8_t>(x * 30 + y * 7 + c * 50));
  return im;
}

TEST(DecodeTest, PngRgbIsExact) {
  RawImage im = gradient(5, 3, 3);
  auto d = decode_image(encode_png(im), {});
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(d->width, 5);
  EXPECT_EQ(d->height, 3);
  EXPECT_EQ(d->pixels, im.pixels);
}

TEST(DecodeTest, PngGrayAlphaAnd16BitBecomeRgb8) {
  RawImage gray = gradient(4, 2, 1);
  auto g = decode_image(encode_png(gray), {});
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  ASSERT_EQ(g->pixels.size(), 4u * 2 * 3);
  for (size_t i = 0; i < gray.pixels.size(); ++i)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(g->pixels[i * 3 + c], gray.pixels[i]);

  RawImage rgba = gradient(3, 3, 4);  // alpha dropped, color kept
  auto a = decode_image(encode_png(rgba), {});
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  for (size_t i = 0; i < 9; ++i)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(a->pixels[i * 3 + c], rgba.pixels[i * 4 + c]);

  RawImage rgb = gradient(3, 2, 3);
  auto wide = decode_image(encode_png(rgb, 16), {});
  ASSERT_TRUE(wide.ok()) << wide.status().to_string();
  EXPECT_EQ(wide->pixels, rgb.pixels);
}

TEST(DecodeTest, JpegRgbAndGrayAreCloseToTheSource) {
  RawImage im = solid(8, 8, 200, 100, 30);
  auto d = decode_image(encode_jpeg(im), {});
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  ASSERT_EQ(d->pixels.size(), im.pixels.size());
  for (size_t i = 0; i < im.pixels.size(); ++i)
    EXPECT_NEAR(d->pixels[i], im.pixels[i], 2) << "sample " << i;

  RawImage gray{8, 8, 1, std::vector<uint8_t>(64, 90)};
  auto g = decode_image(encode_jpeg(gray), {});
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  ASSERT_EQ(g->pixels.size(), 64u * 3);
  for (uint8_t v : g->pixels) EXPECT_NEAR(v, 90, 1);
}

TEST(DecodeTest, TruncatedAndCorruptDataAreInvalidArgument) {
  RawImage im = gradient(16, 16, 3);
  for (const std::string& file : {encode_jpeg(im), encode_png(im)}) {
    for (size_t keep : {file.size() / 2, file.size() - 12, size_t{10}}) {
      auto d = decode_image(file.substr(0, keep), {});
      ASSERT_FALSE(d.ok()) << "kept " << keep << " of " << file.size();
      EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(d.status().message().find("corrupt"), std::string::npos) << d.status().message();
    }
    std::string flipped = file;
    for (size_t i = 20; i < flipped.size(); i += 7)
      flipped[i] = static_cast<char>(flipped[i] ^ 0x5A);
    auto d = decode_image(flipped, {});  // must not crash; if it decodes, the size is sane
    if (d.ok())
      EXPECT_EQ(d->pixels.size(), static_cast<size_t>(d->width) * d->height * 3);
    else
      EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(DecodeTest, UnknownOrEmptyDataIsRefused) {
  auto e = decode_image("", {});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("empty"), std::string::npos);
  auto g = decode_image("GIF89a.......", {});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("neither JPEG nor PNG"), std::string::npos);
}

TEST(DecodeTest, LimitsAreCheckedBeforeDecoding) {
  RawImage im = gradient(20, 10, 3);
  DecodeLimits small_pixels;
  small_pixels.max_pixels = 199;
  for (const std::string& file : {encode_jpeg(im), encode_png(im)}) {
    auto d = decode_image(file, small_pixels);
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.status().message().find("20x10"), std::string::npos) << d.status().message();
    EXPECT_NE(d.status().message().find("199"), std::string::npos);
    DecodeLimits small_bytes;
    small_bytes.max_bytes = static_cast<int64_t>(file.size()) - 1;
    auto b = decode_image(file, small_bytes);
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.status().message().find("bytes is over the limit"), std::string::npos);
    DecodeLimits exact;
    exact.max_pixels = 200;
    exact.max_bytes = static_cast<int64_t>(file.size());
    EXPECT_TRUE(decode_image(file, exact).ok());
  }
}

}  // namespace
}  // namespace osprey::server::processing
