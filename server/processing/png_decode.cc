// PNG decoding with libpng, reading from memory. libpng's error handler longjmps back here;
// every input is transformed to 8-bit RGB (palette expanded, 16-bit reduced, gray replicated,
// alpha dropped).
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "processing/image_decode.h"

namespace osprey::server::processing {
namespace {

struct Reader {
  const unsigned char* data;
  size_t size;
  size_t pos;
  char message[256];
};

void read_fn(png_structp png, png_bytep out, png_size_t n) {
  auto* r = static_cast<Reader*>(png_get_io_ptr(png));
  if (n > r->size - r->pos) png_error(png, "truncated data (read past the end)");
  std::memcpy(out, r->data + r->pos, n);
  r->pos += n;
}

void on_error(png_structp png, png_const_charp msg) {
  auto* r = static_cast<Reader*>(png_get_error_ptr(png));
  std::snprintf(r->message, sizeof r->message, "%s", msg);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}

// No object with a destructor may live in a frame that longjmp crosses: the row pointers and
// the message live in the caller.
bool dimensions_ok(int64_t width, int64_t height, const DecodeLimits& limits, std::string* why) {
  Status st = check_dimensions("PNG", width, height, limits);
  if (st.ok()) return true;
  *why = st.message();
  return false;
}

bool run_decode(png_structp png, png_infop info, const DecodeLimits& limits, Image8* out,
                std::vector<png_bytep>* rows, Reader* reader, std::string* why) {
  if (setjmp(png_jmpbuf(png))) {
    *why = reader->message;
    return false;
  }
  png_read_info(png, info);
  png_uint_32 width = 0, height = 0;
  int depth = 0, color = 0;
  png_get_IHDR(png, info, &width, &height, &depth, &color, nullptr, nullptr, nullptr);
  if (!dimensions_ok(width, height, limits, why)) return false;
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (depth == 16) png_set_strip_16(png);
  if (color & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(png);
  if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_channels(png, info) != kChannels || png_get_bit_depth(png, info) != 8) {
    *why = "PNG did not transform to 8-bit RGB";
    return false;
  }
  out->width = static_cast<int>(width);
  out->height = static_cast<int>(height);
  out->pixels.resize(static_cast<size_t>(width) * height * kChannels);
  rows->resize(height);
  for (png_uint_32 y = 0; y < height; ++y)
    (*rows)[y] = out->pixels.data() + static_cast<size_t>(y) * width * kChannels;
  png_read_image(png, rows->data());
  png_read_end(png, nullptr);
  return true;
}

}  // namespace

Result<Image8> decode_png(std::string_view bytes, const DecodeLimits& limits) {
  Reader reader{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), 0, {}};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &reader, on_error, on_warning);
  if (!png) return internal_error("libpng could not create a read struct");
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return internal_error("libpng could not create an info struct");
  }
  png_set_read_fn(png, &reader, read_fn);
  // Refuse huge dimensions inside libpng too (before its own row allocations).
  png_set_user_limits(png, 1u << 30, 1u << 30);
  Image8 image;
  std::string why;
  std::vector<png_bytep> rows;
  const bool ok = run_decode(png, info, limits, &image, &rows, &reader, &why);
  png_destroy_read_struct(&png, &info, nullptr);
  if (!ok) return invalid_argument("corrupt or unsupported PNG: ", why);
  return image;
}

}  // namespace osprey::server::processing
