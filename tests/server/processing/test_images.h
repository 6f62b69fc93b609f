// Encoders for the processing tests: tiny JPEG and PNG files made in memory with libjpeg and
// libpng, so every test knows exactly which pixels went in.
#pragma once

#include <png.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

extern "C" {
#include <jpeglib.h>
}

namespace osprey::server::processing::testing {

// An image with `channels` interleaved 8-bit samples per pixel.
struct RawImage {
  int width = 0;
  int height = 0;
  int channels = 3;
  std::vector<uint8_t> pixels;
};

inline RawImage solid(int width, int height, uint8_t r, uint8_t g, uint8_t b) {
  RawImage im{width, height, 3, {}};
  for (int i = 0; i < width * height; ++i) im.pixels.insert(im.pixels.end(), {r, g, b});
  return im;
}

// channels 1 (gray) or 3 (RGB); quality 100 keeps solid colors within a step or two.
inline std::string encode_jpeg(const RawImage& im, int quality = 100) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buf, &size);
  c.image_width = static_cast<JDIMENSION>(im.width);
  c.image_height = static_cast<JDIMENSION>(im.height);
  c.input_components = im.channels;
  c.in_color_space = im.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, quality, TRUE);
  // No chroma subsampling: colors stay exact enough to test with.
  for (int i = 0; i < c.num_components; ++i)
    c.comp_info[i].h_samp_factor = c.comp_info[i].v_samp_factor = 1;
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(im.pixels.data()) +
                   static_cast<size_t>(c.next_scanline) * im.width * im.channels;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  std::string out(reinterpret_cast<char*>(buf), size);
  jpeg_destroy_compress(&c);
  std::free(buf);
  return out;
}

inline void png_append(png_structp png, png_bytep data, png_size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<char*>(data), n);
}
inline void png_noop_flush(png_structp) {}

// channels 1 (gray), 2 (gray+alpha), 3 (RGB) or 4 (RGBA); bit_depth 8 or 16 (16 repeats each
// byte, so that stripping back to 8 bits gives the same value).
inline std::string encode_png(const RawImage& im, int bit_depth = 8) {
  std::string out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  png_set_write_fn(png, &out, png_append, png_noop_flush);
  const int type = im.channels == 1   ? PNG_COLOR_TYPE_GRAY
                   : im.channels == 2 ? PNG_COLOR_TYPE_GRAY_ALPHA
                   : im.channels == 3 ? PNG_COLOR_TYPE_RGB
                                      : PNG_COLOR_TYPE_RGBA;
  png_set_IHDR(png, info, static_cast<png_uint_32>(im.width), static_cast<png_uint_32>(im.height),
               bit_depth, type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  const size_t samples = static_cast<size_t>(im.width) * im.channels;
  std::vector<uint8_t> row(samples * (bit_depth / 8));
  for (int y = 0; y < im.height; ++y) {
    const uint8_t* src = im.pixels.data() + y * samples;
    for (size_t i = 0; i < samples; ++i) {
      if (bit_depth == 8)
        row[i] = src[i];
      else
        row[2 * i] = row[2 * i + 1] = src[i];
    }
    png_write_row(png, row.data());
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

}  // namespace osprey::server::processing::testing
