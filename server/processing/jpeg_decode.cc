// JPEG decoding with libjpeg-turbo. libjpeg reports fatal errors through error_exit, which by
// default calls exit(); ours longjmps back here instead, and warnings (e.g. premature end of
// data) are turned into errors so that a truncated file is refused rather than half-decoded.
#include <csetjmp>
#include <cstdio>
#include <string>

#include "processing/image_decode.h"

extern "C" {
#include <jpeglib.h>
}

namespace osprey::server::processing {
namespace {

struct ErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void on_error(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void on_message(j_common_ptr cinfo, int level) {
  if (level < 0) on_error(cinfo);  // a warning: corrupt or truncated data
}

void silent_output(j_common_ptr) {}

// No object with a destructor may live in a frame that longjmp crosses.
bool dimensions_ok(const char* format, int64_t width, int64_t height, const DecodeLimits& limits,
                   std::string* why) {
  Status st = check_dimensions(format, width, height, limits);
  if (st.ok()) return true;
  *why = st.message();
  return false;
}

// Kept apart from decode_jpeg so that no object with a destructor lives in the frame that
// setjmp returns to twice.
bool run_decode(jpeg_decompress_struct* cinfo, ErrorManager* err, std::string_view bytes,
                const DecodeLimits& limits, Image8* out, std::string* why) {
  if (setjmp(err->jump)) {
    *why = err->message;
    return false;
  }
  jpeg_create_decompress(cinfo);
  jpeg_mem_src(cinfo, reinterpret_cast<const unsigned char*>(bytes.data()),
               static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(cinfo, TRUE);
  if (!dimensions_ok("JPEG", cinfo->image_width, cinfo->image_height, limits, why)) return false;
  if (cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK) {
    *why = "CMYK JPEG is not supported (only grayscale and color)";
    return false;
  }
  cinfo->out_color_space = JCS_RGB;
  jpeg_start_decompress(cinfo);
  if (cinfo->output_components != kChannels) {
    *why = "JPEG decoded to an unexpected number of channels";
    return false;
  }
  out->width = static_cast<int>(cinfo->output_width);
  out->height = static_cast<int>(cinfo->output_height);
  out->pixels.resize(static_cast<size_t>(out->width) * out->height * kChannels);
  const size_t stride = static_cast<size_t>(out->width) * kChannels;
  while (cinfo->output_scanline < cinfo->output_height) {
    JSAMPROW row = out->pixels.data() + cinfo->output_scanline * stride;
    jpeg_read_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_decompress(cinfo);
  return true;
}

}  // namespace

Result<Image8> decode_jpeg(std::string_view bytes, const DecodeLimits& limits) {
  jpeg_decompress_struct cinfo{};
  ErrorManager err{};
  cinfo.err = jpeg_std_error(&err.base);
  err.base.error_exit = on_error;
  err.base.emit_message = on_message;
  err.base.output_message = silent_output;
  Image8 image;
  std::string why;
  const bool ok = run_decode(&cinfo, &err, bytes, limits, &image, &why);
  jpeg_destroy_decompress(&cinfo);
  if (!ok) return invalid_argument("corrupt or unsupported JPEG: ", why);
  return image;
}

}  // namespace osprey::server::processing
