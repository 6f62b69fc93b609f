// The image pre-processing stage as a model's config.pbtxt declares it, through Triton's
// `parameters` map (so the file stays parseable by Triton's tools):
//
//   input [ { name: "image" data_type: TYPE_STRING dims: [ 1 ] } ]   # what clients send
//   parameters { key: "preprocess"     value { string_value: "image" } }
//   parameters { key: "image_input"    value { string_value: "data" } }  # the model's input
//   parameters { key: "resize"         value { string_value: "center_crop" } }  # or letterbox
//   parameters { key: "size"           value { string_value: "224" } }   # or "H,W"
//   parameters { key: "resize_shorter" value { string_value: "256" } }   # center_crop only
//   parameters { key: "letterbox_pad"  value { string_value: "114" } }   # letterbox only
//   parameters { key: "mean"           value { string_value: "0.485,0.456,0.406" } }
//   parameters { key: "std"            value { string_value: "0.229,0.224,0.225" } }
//   parameters { key: "scale"          value { string_value: "1/255" } }
//   parameters { key: "layout"         value { string_value: "NCHW" } }   # or NHWC
//   parameters { key: "color"          value { string_value: "RGB" } }    # or BGR
//   parameters { key: "max_image_bytes"  value { string_value: "16777216" } }
//   parameters { key: "max_image_pixels" value { string_value: "40000000" } }
//
// The config's one TYPE_STRING input (dims [1]; [batch, 1] on the wire when batching) carries
// one encoded JPEG or PNG per batch item; the stage feeds the model's FP32 input `image_input`
// with value = (pixel * scale - mean[c]) / std[c], pixel in 0..255 and c in `color` order.
// Defaults: resize center_crop, resize_shorter = the larger of the size's sides, pad 0, mean 0,
// std 1, scale 1, NCHW, RGB, limits as DecodeLimits. Every key is checked at load; an error
// names the key and the value.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "osprey/status.h"
#include "osprey_server/model_config.pb.h"
#include "processing/image_decode.h"

namespace osprey::server::processing {

enum class ResizeMode { kCenterCrop, kLetterbox };
enum class Layout { kNCHW, kNHWC };
enum class ColorOrder { kRGB, kBGR };

struct ImagePreprocessSpec {
  std::string bytes_input;  // the config's TYPE_STRING input clients send images in
  std::string model_input;  // the model's FP32 input the stage feeds
  ResizeMode resize = ResizeMode::kCenterCrop;
  int width = 0;
  int height = 0;
  int resize_shorter = 0;
  float pad = 0;
  std::array<float, 3> mean = {0, 0, 0};
  std::array<float, 3> std = {1, 1, 1};
  float scale = 1;
  Layout layout = Layout::kNCHW;
  ColorOrder color = ColorOrder::kRGB;
  DecodeLimits limits;

  // The model input's dims without the batch dim: [3, H, W] (NCHW) or [H, W, 3] (NHWC).
  std::vector<int64_t> model_dims() const;
  int64_t elements_per_image() const { return int64_t{3} * width * height; }
};

// The stage a config declares, or nullopt when it has no "preprocess" parameter.
Result<std::optional<ImagePreprocessSpec>> parse_image_preprocess(
    const inference::ModelConfig& config);

// The post-processing switch: parameter "classification_softmax" ("true" or "false", default
// false) applies a softmax to an output before the top-K that `classification` asks for.
Result<bool> parse_classification_softmax(const inference::ModelConfig& config);

}  // namespace osprey::server::processing
