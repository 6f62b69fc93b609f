// The Server end to end with an image classifier: BYTES JPEG/PNG in, the image stage feeds a
// tiny ONNX model (GlobalAveragePool + Flatten + Gemm on NCHW), classification strings out;
// load-time checks, request errors, statistics and metrics.
#include <gtest/gtest.h>

#include "core/osprey_backend.h"
#include "core/server_impl.h"
#include "processing/bytes_elements.h"
#include "test_images.h"
#include "test_util.h"

namespace osprey::server {
namespace {

using osprey::server::testing::TempDir;
using processing::testing::encode_jpeg;
using processing::testing::encode_png;
using processing::testing::solid;

// data: float[N,3,4,4] -> mean per channel [N,3] -> logits = features + [0, 0.6, 0.2].
std::string classifier_model() {
  osprey::testing::ModelBuilder m;
  m.input("data", onnx::TensorProto::FLOAT, {-1, 3, 4, 4});
  m.initializer("w", {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  m.initializer("b", {3}, {0, 0.6f, 0.2f});
  m.node("GlobalAveragePool", {"data"}, {"pooled"});
  m.node("Flatten", {"pooled"}, {"features"});
  m.node("Gemm", {"features", "w", "b"}, {"logits"});
  m.output("logits");
  osprey::server::testing::set_output_shape(m.proto(), 0, {-1, 3});
  return m.bytes();
}

constexpr const char* kConfig = R"(
max_batch_size: 4
input [ { name: "image" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "logits" data_type: TYPE_FP32 dims: [ 3 ] label_filename: "labels.txt" } ]
dynamic_batching { max_queue_delay_microseconds: 0 }
parameters { key: "preprocess" value { string_value: "image" } }
parameters { key: "image_input" value { string_value: "data" } }
parameters { key: "size" value { string_value: "4" } }
parameters { key: "resize_shorter" value { string_value: "4" } }
parameters { key: "scale" value { string_value: "1/255" } }
)";

std::string bytes_tensor(const std::vector<std::string>& items) {
  std::string data;
  for (const auto& s : items) processing::append_bytes_element(s, &data);
  return data;
}

InferRequest image_request(const std::vector<std::string>& images, int64_t k) {
  InferRequest r;
  r.model_name = "classifier";
  WireTensor t;
  t.name = "image";
  t.datatype = "BYTES";
  t.shape = {static_cast<int64_t>(images.size()), 1};
  t.data = bytes_tensor(images);
  r.inputs.push_back(t);
  RequestedOutput out{"logits", {}};
  if (k > 0) out.parameters["classification"] = k;
  r.outputs.push_back(out);
  return r;
}

std::vector<std::string> strings_of(const WireTensor& t, int64_t count) {
  auto parts = processing::split_bytes_elements(t.data, count);
  EXPECT_TRUE(parts.ok()) << parts.status().to_string();
  std::vector<std::string> out;
  if (parts.ok())
    for (auto p : *parts) out.emplace_back(p);
  return out;
}

struct ProcessingServerTest : ::testing::Test {
  void SetUp() override {
    repo.write("classifier/config.pbtxt", kConfig);
    repo.write("classifier/labels.txt", "red\ngreen\nblue\n");
    repo.write("classifier/1/model.onnx", classifier_model());
    server = testing::make_test_server(repo);
    ASSERT_NE(server, nullptr);
  }
  TempDir repo;
  std::unique_ptr<ServerImpl> server;
};

TEST_F(ProcessingServerTest, PngAndJpegGiveTopKWithLabels) {
  ASSERT_TRUE(server->ready());
  // (255, 51, 0) -> features (1, 0.2, 0) -> logits (1, 0.8, 0.2).
  std::string png = encode_png(solid(6, 5, 255, 51, 0));
  // (51, 255, 153) -> features (0.2, 1, 0.6) -> logits (0.2, 1.6, 0.8).
  std::string jpeg = encode_jpeg(solid(8, 8, 51, 255, 153));
  auto r = server->infer(image_request({png, jpeg}, 2));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->outputs.size(), 1u);
  const WireTensor& t = r->outputs[0];
  EXPECT_EQ(t.name, "logits");
  EXPECT_EQ(t.datatype, "BYTES");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 2}));
  auto s = strings_of(t, 4);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], "1.000000:0:red");
  EXPECT_EQ(s[1], "0.800000:1:green");
  // JPEG is lossy: the order and labels are exact, the scores close.
  EXPECT_NE(s[2].find(":1:green"), std::string::npos) << s[2];
  EXPECT_NEAR(std::stof(s[2]), 1.6, 0.02);
  EXPECT_NE(s[3].find(":2:blue"), std::string::npos) << s[3];
  EXPECT_NEAR(std::stof(s[3]), 0.8, 0.02);
}

TEST_F(ProcessingServerTest, WithoutClassificationTheRawOutputComesBack) {
  auto r = server->infer(image_request({encode_png(solid(4, 4, 0, 255, 51))}, 0));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const WireTensor& t = r->outputs[0];
  EXPECT_EQ(t.datatype, "FP32");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 3}));
  auto v = osprey::server::testing::bytes_to_floats(t.data);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_NEAR(v[0], 0, 1e-6);
  EXPECT_NEAR(v[1], 1.6, 1e-6);
  EXPECT_NEAR(v[2], 0.4, 1e-6);
}

TEST_F(ProcessingServerTest, TheConfigShowsTheBytesInput) {
  inference::ModelConfig c;
  ASSERT_TRUE(server->model_config("classifier", "", &c).ok());
  ASSERT_EQ(c.input_size(), 1);
  EXPECT_EQ(c.input(0).name(), "image");
  EXPECT_EQ(c.input(0).data_type(), inference::TYPE_STRING);
  auto md = server->model_metadata("classifier", "");
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(md->inputs[0].datatype, "BYTES");
}

TEST_F(ProcessingServerTest, BadImagesAndParametersAreInvalidArgument) {
  auto corrupt = server->infer(image_request({std::string("\x89PNG\r\n\x1a\nbroken", 14)}, 1));
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(corrupt.status().message().find("input 'image' image 0"), std::string::npos)
      << corrupt.status().message();
  EXPECT_NE(corrupt.status().message().find("PNG"), std::string::npos);

  auto text = server->infer(image_request({"hello"}, 1));
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("neither JPEG nor PNG"), std::string::npos);

  InferRequest framing = image_request({"x"}, 1);
  framing.inputs[0].data = "\x05\x00\x00\x00ab";
  auto f = server->infer(framing);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(f.status().message().find("input 'image'"), std::string::npos) << f.status().message();

  InferRequest zero_k = image_request({encode_png(solid(4, 4, 1, 2, 3))}, 1);
  zero_k.outputs[0].parameters["classification"] = int64_t{0};
  auto z = server->infer(zero_k);
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.status().message().find("'classification'"), std::string::npos);
}

TEST_F(ProcessingServerTest, StagesAreTimedInStatisticsAndMetrics) {
  ASSERT_TRUE(server->infer(image_request({encode_png(solid(4, 4, 9, 9, 9))}, 1)).ok());
  auto stats = server->statistics("classifier", "");
  ASSERT_TRUE(stats.ok());
  ASSERT_EQ(stats->size(), 1u);
  EXPECT_EQ((*stats)[0].inference_stats.compute_input.count, 1u);
  EXPECT_GT((*stats)[0].inference_stats.compute_input.ns, 0u);
  const std::string m = server->prometheus_metrics();
  EXPECT_NE(
      m.find("osprey_preprocess_duration_seconds_count{model=\"classifier\",version=\"1\"} 1"),
      std::string::npos)
      << m;
  EXPECT_NE(
      m.find("osprey_postprocess_duration_seconds_count{model=\"classifier\",version=\"1\"} 1"),
      std::string::npos);
}

TEST(ProcessingServerLoad, BadStageConfigFailsTheLoadNamingTheKey) {
  TempDir repo;
  std::string cfg = kConfig;
  cfg += "parameters { key: \"layout\" value { string_value: \"CHWN\" } }\n";
  repo.write("classifier/config.pbtxt", cfg);
  repo.write("classifier/labels.txt", "a\n");
  repo.write("classifier/1/model.onnx", classifier_model());
  // A missing label file fails its model too.
  std::string no_labels = kConfig;
  no_labels.replace(no_labels.find("labels.txt"), 10, "nolabel.txt");
  repo.write("nolabels/config.pbtxt", no_labels);
  repo.write("nolabels/1/model.onnx", classifier_model());
  // The stage's size must match the model's input (4x4).
  std::string wrong_size = kConfig;
  const std::string four = "string_value: \"4\"";
  for (size_t at; (at = wrong_size.find(four)) != std::string::npos;)
    wrong_size.replace(at, four.size(), "string_value: \"5\"");
  repo.write("wrongsize/config.pbtxt", wrong_size);
  repo.write("wrongsize/labels.txt", "a\n");
  repo.write("wrongsize/1/model.onnx", classifier_model());
  auto s = testing::make_test_server(repo);
  ASSERT_NE(s, nullptr);
  std::map<std::string, std::string> reasons;
  for (const auto& e : s->repository_index(false)) reasons[e.name] = e.reason;
  EXPECT_NE(reasons["classifier"].find("'layout'"), std::string::npos) << reasons["classifier"];
  EXPECT_NE(reasons["nolabels"].find("nolabel.txt"), std::string::npos) << reasons["nolabels"];
  EXPECT_NE(reasons["wrongsize"].find("data"), std::string::npos) << reasons["wrongsize"];
}

}  // namespace
}  // namespace osprey::server
