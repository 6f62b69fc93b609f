#include "processing/preprocess_config.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace osprey::server::processing {
namespace {

constexpr int kMaxSide = 16384;

const std::string* param(const inference::ModelConfig& c, const std::string& key) {
  auto it = c.parameters().find(key);
  return it == c.parameters().end() ? nullptr : &it->second.string_value();
}

Status bad(const std::string& key, const std::string& value, const std::string& why) {
  return invalid_argument("parameter '", key, "' = '", value, "': ", why);
}

Result<int64_t> parse_int(const std::string& key, const std::string& text, int64_t lo, int64_t hi) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    return bad(key, text, "not an integer");
  if (v < lo || v > hi) return bad(key, text, str_cat("must be in [", lo, ", ", hi, "]"));
  return v;
}

Result<float> parse_float(const std::string& key, const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.front() == ' ') t.erase(t.begin());
  while (!t.empty() && t.back() == ' ') t.pop_back();
  const char* begin = t.c_str();
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  if (t.empty() || end == begin) return bad(key, text, "not a number");
  if (*end == '/') {  // a fraction such as 1/255
    const char* denom_begin = end + 1;
    double d = std::strtod(denom_begin, &end);
    if (end == denom_begin || d == 0)
      return bad(key, text, "not a number or a fraction a/b with b != 0");
    v /= d;
  }
  if (*end != '\0') return bad(key, text, "not a number");
  if (!std::isfinite(v)) return bad(key, text, "not finite");
  return static_cast<float>(v);
}

Result<std::array<float, 3>> parse_triple(const std::string& key, const std::string& text) {
  std::array<float, 3> out{};
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    size_t comma = text.find(',', start);
    if ((i < 2) != (comma != std::string::npos))
      return bad(key, text, "needs exactly 3 comma-separated numbers (one per channel)");
    std::string piece = text.substr(start, i < 2 ? comma - start : std::string::npos);
    OSPREY_ASSIGN_OR_RETURN(out[static_cast<size_t>(i)], parse_float(key, piece));
    start = comma + 1;
  }
  return out;
}

Status parse_size(const std::string& text, ImagePreprocessSpec* s) {
  size_t comma = text.find(',');
  if (comma == std::string::npos) {
    OSPREY_ASSIGN_OR_RETURN(int64_t side, parse_int("size", text, 1, kMaxSide));
    s->width = s->height = static_cast<int>(side);
    return Status::Ok();
  }
  OSPREY_ASSIGN_OR_RETURN(int64_t h, parse_int("size", text.substr(0, comma), 1, kMaxSide));
  OSPREY_ASSIGN_OR_RETURN(int64_t w, parse_int("size", text.substr(comma + 1), 1, kMaxSide));
  s->height = static_cast<int>(h);
  s->width = static_cast<int>(w);
  return Status::Ok();
}

// Every parameter key the stage understands; other keys belong to others (e.g. the engine).
Status check_choices(const inference::ModelConfig& c, ImagePreprocessSpec* s) {
  if (const auto* v = param(c, "resize")) {
    if (*v == "center_crop")
      s->resize = ResizeMode::kCenterCrop;
    else if (*v == "letterbox")
      s->resize = ResizeMode::kLetterbox;
    else
      return bad("resize", *v, "must be center_crop or letterbox");
  }
  if (const auto* v = param(c, "layout")) {
    if (*v == "NCHW")
      s->layout = Layout::kNCHW;
    else if (*v == "NHWC")
      s->layout = Layout::kNHWC;
    else
      return bad("layout", *v, "must be NCHW or NHWC");
  }
  if (const auto* v = param(c, "color")) {
    if (*v == "RGB")
      s->color = ColorOrder::kRGB;
    else if (*v == "BGR")
      s->color = ColorOrder::kBGR;
    else
      return bad("color", *v, "must be RGB or BGR");
  }
  return Status::Ok();
}

Result<std::string> bytes_input(const inference::ModelConfig& c) {
  std::string name;
  for (const auto& in : c.input()) {
    if (in.data_type() != inference::TYPE_STRING) continue;
    if (!name.empty())
      return invalid_argument("parameter 'preprocess' = 'image': inputs '", name, "' and '",
                              in.name(), "' are both TYPE_STRING; exactly one may carry images");
    if (in.dims_size() != 1 || in.dims(0) != 1)
      return invalid_argument(
          "input '", in.name(),
          "': an image input must have dims [ 1 ] (one encoded image per item)");
    name = in.name();
  }
  if (name.empty())
    return invalid_argument(
        "parameter 'preprocess' = 'image' needs an input with data_type "
        "TYPE_STRING and dims [ 1 ] for the encoded images");
  return name;
}

}  // namespace

std::vector<int64_t> ImagePreprocessSpec::model_dims() const {
  if (layout == Layout::kNCHW) return {3, height, width};
  return {height, width, 3};
}

Result<std::optional<ImagePreprocessSpec>> parse_image_preprocess(const inference::ModelConfig& c) {
  const std::string* kind = param(c, "preprocess");
  if (!kind) return std::optional<ImagePreprocessSpec>();
  if (*kind != "image") return bad("preprocess", *kind, "the only pre-processing stage is 'image'");
  ImagePreprocessSpec s;
  OSPREY_ASSIGN_OR_RETURN(s.bytes_input, bytes_input(c));
  const std::string* model_input = param(c, "image_input");
  if (!model_input || model_input->empty())
    return invalid_argument(
        "parameter 'image_input' (the model input the image stage feeds) is missing");
  if (*model_input == s.bytes_input)
    return bad("image_input", *model_input,
               "must name the model's FP32 input, not the TYPE_STRING input");
  s.model_input = *model_input;
  const std::string* size = param(c, "size");
  if (!size)
    return invalid_argument("parameter 'size' (the model's image side, or H,W) is missing");
  OSPREY_RETURN_IF_ERROR(parse_size(*size, &s));
  OSPREY_RETURN_IF_ERROR(check_choices(c, &s));
  s.resize_shorter = std::max(s.width, s.height);
  if (const auto* v = param(c, "resize_shorter")) {
    if (s.resize != ResizeMode::kCenterCrop)
      return bad("resize_shorter", *v, "applies to center_crop only");
    OSPREY_ASSIGN_OR_RETURN(int64_t n,
                            parse_int("resize_shorter", *v, std::max(s.width, s.height), kMaxSide));
    s.resize_shorter = static_cast<int>(n);
  }
  if (const auto* v = param(c, "letterbox_pad")) {
    if (s.resize != ResizeMode::kLetterbox)
      return bad("letterbox_pad", *v, "applies to letterbox only");
    OSPREY_ASSIGN_OR_RETURN(s.pad, parse_float("letterbox_pad", *v));
    if (s.pad < 0 || s.pad > 255) return bad("letterbox_pad", *v, "must be in [0, 255]");
  }
  if (const auto* v = param(c, "mean")) {
    OSPREY_ASSIGN_OR_RETURN(s.mean, parse_triple("mean", *v));
  }
  if (const auto* v = param(c, "std")) {
    OSPREY_ASSIGN_OR_RETURN(s.std, parse_triple("std", *v));
    for (float x : s.std)
      if (x == 0) return bad("std", *v, "a standard deviation of 0 divides by zero");
  }
  if (const auto* v = param(c, "scale")) {
    OSPREY_ASSIGN_OR_RETURN(s.scale, parse_float("scale", *v));
    if (s.scale == 0) return bad("scale", *v, "must not be 0");
  }
  if (const auto* v = param(c, "max_image_bytes")) {
    OSPREY_ASSIGN_OR_RETURN(s.limits.max_bytes,
                            parse_int("max_image_bytes", *v, 1, int64_t{1} << 30));
  }
  if (const auto* v = param(c, "max_image_pixels")) {
    OSPREY_ASSIGN_OR_RETURN(s.limits.max_pixels,
                            parse_int("max_image_pixels", *v, 1, int64_t{1} << 30));
  }
  return std::optional<ImagePreprocessSpec>(std::move(s));
}

Result<bool> parse_classification_softmax(const inference::ModelConfig& c) {
  const std::string* v = param(c, "classification_softmax");
  if (!v || *v == "false") return false;
  if (*v == "true") return true;
  return bad("classification_softmax", *v, "must be true or false");
}

}  // namespace osprey::server::processing
