// The image stage's config (every key and its errors), normalization and layout, and the whole
// stage on an encoded image.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "processing/image_preprocess.h"
#include "processing/preprocess_config.h"
#include "test_images.h"

namespace osprey::server::processing {
namespace {

constexpr const char* kBase = R"(
name: "m"
input [ { name: "image" data_type: TYPE_STRING dims: [ 1 ] } ]
parameters { key: "preprocess" value { string_value: "image" } }
parameters { key: "image_input" value { string_value: "data" } }
parameters { key: "size" value { string_value: "4" } }
)";

inference::ModelConfig config(const std::string& extra) {
  inference::ModelConfig c;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(std::string(kBase) + extra, &c));
  return c;
}

std::string param(const std::string& key, const std::string& value) {
  return "parameters { key: \"" + key + "\" value { string_value: \"" + value + "\" } }\n";
}

TEST(PreprocessConfigTest, NoPreprocessKeyMeansNoStage) {
  inference::ModelConfig c;
  auto s = parse_image_preprocess(c);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->has_value());
}

TEST(PreprocessConfigTest, DefaultsAndEveryKey) {
  auto d = parse_image_preprocess(config(""));
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  const ImagePreprocessSpec& s = **d;
  EXPECT_EQ(s.bytes_input, "image");
  EXPECT_EQ(s.model_input, "data");
  EXPECT_EQ(s.width, 4);
  EXPECT_EQ(s.height, 4);
  EXPECT_EQ(s.resize, ResizeMode::kCenterCrop);
  EXPECT_EQ(s.resize_shorter, 4);
  EXPECT_EQ(s.layout, Layout::kNCHW);
  EXPECT_EQ(s.model_dims(), (std::vector<int64_t>{3, 4, 4}));

  auto f = parse_image_preprocess(
      config(param("size", "6,8") + param("resize", "letterbox") + param("letterbox_pad", "114") +
             param("mean", "0.485, 0.456,0.406") + param("std", "0.229,0.224,0.225") +
             param("scale", "1/255") + param("layout", "NHWC") + param("color", "BGR") +
             param("max_image_bytes", "1000") + param("max_image_pixels", "5000")));
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  const ImagePreprocessSpec& t = **f;
  EXPECT_EQ(t.height, 6);
  EXPECT_EQ(t.width, 8);
  EXPECT_EQ(t.resize, ResizeMode::kLetterbox);
  EXPECT_FLOAT_EQ(t.pad, 114);
  EXPECT_FLOAT_EQ(t.mean[1], 0.456f);
  EXPECT_FLOAT_EQ(t.std[2], 0.225f);
  EXPECT_FLOAT_EQ(t.scale, 1.0f / 255);
  EXPECT_EQ(t.layout, Layout::kNHWC);
  EXPECT_EQ(t.color, ColorOrder::kBGR);
  EXPECT_EQ(t.limits.max_bytes, 1000);
  EXPECT_EQ(t.limits.max_pixels, 5000);
  EXPECT_EQ(t.model_dims(), (std::vector<int64_t>{6, 8, 3}));
}

TEST(PreprocessConfigTest, BadValuesNameTheKey) {
  struct Case {
    std::string extra, key;
  };
  const std::vector<Case> cases = {
      {param("resize", "stretch"), "'resize'"},
      {param("layout", "CHW"), "'layout'"},
      {param("color", "rgb"), "'color'"},
      {param("mean", "1,2"), "'mean'"},
      {param("mean", "1,2,x"), "'mean'"},
      {param("std", "1,0,1"), "'std'"},
      {param("scale", "1/0"), "'scale'"},
      {param("scale", "0"), "'scale'"},
      {param("resize_shorter", "3"), "'resize_shorter'"},  // below the crop size
      {param("letterbox_pad", "1"), "'letterbox_pad'"},    // center_crop has no padding
      {param("max_image_bytes", "-1"), "'max_image_bytes'"},
      {param("max_image_pixels", "many"), "'max_image_pixels'"},
      {param("classification_softmax", "yes"), "'classification_softmax'"},
  };
  for (const auto& c : cases) {
    auto cfg = config(c.extra);
    // Later keys of the same name replace the base's in a protobuf map.
    Status st = parse_image_preprocess(cfg).status();
    if (st.ok()) st = parse_classification_softmax(cfg).status();
    ASSERT_FALSE(st.ok()) << c.extra;
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find(c.key), std::string::npos) << st.message();
  }
}

TEST(PreprocessConfigTest, MissingOrWrongInputsAreNamed) {
  inference::ModelConfig c = config("");
  c.mutable_parameters()->erase("size");
  EXPECT_NE(parse_image_preprocess(c).status().message().find("'size'"), std::string::npos);
  c = config(param("size", "0"));
  EXPECT_NE(parse_image_preprocess(c).status().message().find("'size'"), std::string::npos);
  c = config("");
  c.mutable_parameters()->erase("image_input");
  EXPECT_NE(parse_image_preprocess(c).status().message().find("'image_input'"), std::string::npos);
  c = config(param("preprocess", "audio"));
  EXPECT_NE(parse_image_preprocess(c).status().message().find("'preprocess'"), std::string::npos);
  c = config("");
  c.mutable_input(0)->set_dims(0, 2);
  EXPECT_NE(parse_image_preprocess(c).status().message().find("dims [ 1 ]"), std::string::npos);
  c = config("");
  c.mutable_input(0)->set_data_type(inference::TYPE_FP32);
  EXPECT_NE(parse_image_preprocess(c).status().message().find("TYPE_STRING"), std::string::npos);
}

ImageF two_pixels() {  // 2x1: (10, 20, 30) and (40, 50, 60)
  return ImageF{2, 1, {10, 20, 30, 40, 50, 60}};
}

TEST(NormalizeTest, NchwNhwcAndBgr) {
  ImagePreprocessSpec s;
  s.width = 2;
  s.height = 1;
  s.mean = {1, 2, 3};
  s.std = {2, 4, 8};
  s.scale = 0.5f;
  std::vector<float> out(6);
  normalize_into(two_pixels(), s, out.data());
  // (p * 0.5 - mean) / std, planes R, G, B.
  EXPECT_EQ(out, (std::vector<float>{2, 9.5f, 2, 5.75f, 1.5f, 3.375f}));
  s.layout = Layout::kNHWC;
  normalize_into(two_pixels(), s, out.data());
  EXPECT_EQ(out, (std::vector<float>{2, 2, 1.5f, 9.5f, 5.75f, 3.375f}));
  s.layout = Layout::kNCHW;
  s.color = ColorOrder::kBGR;
  s.mean = {0, 0, 0};
  s.std = {1, 1, 1};
  s.scale = 1;
  normalize_into(two_pixels(), s, out.data());
  EXPECT_EQ(out, (std::vector<float>{30, 60, 20, 50, 10, 40}));
}

TEST(PreprocessImageTest, PngThroughTheWholeStage) {
  auto spec = parse_image_preprocess(config(param("size", "2") + param("scale", "1/255")));
  ASSERT_TRUE(spec.ok());
  // 4x4 solid (51, 102, 255): any resize keeps a solid color.
  std::string png = testing::encode_png(testing::solid(4, 4, 51, 102, 255));
  std::vector<float> out(12, -1);
  ASSERT_TRUE(preprocess_image(png, **spec, out.data()).ok());
  for (int i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(out[i], 0.2f);
    EXPECT_FLOAT_EQ(out[4 + i], 0.4f);
    EXPECT_FLOAT_EQ(out[8 + i], 1.0f);
  }
  Status bad = preprocess_image(png.substr(0, 30), **spec, out.data());
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace osprey::server::processing
