#include "core/model_config_complete.h"

#include <gtest/gtest.h>

#include "core/model_config_loader.h"
#include "osprey/session.h"
#include "test_util.h"

namespace osprey::server {
namespace {

TensorInfo info(const std::string& name, DType dtype, std::vector<int64_t> dims) {
  TensorInfo t;
  t.name = name;
  t.dtype = dtype;
  t.has_shape = true;
  for (auto d : dims) {
    Dim dim;
    dim.value = d;
    if (d < 0) dim.symbol = "N";
    t.shape.push_back(dim);
  }
  return t;
}

inference::ModelConfig config(const std::string& text) {
  auto c = parse_model_config(text, "c");
  EXPECT_TRUE(c.ok()) << c.status().to_string();
  return c.ok() ? c.value() : inference::ModelConfig();
}

TEST(ModelConfigComplete, FillsFromRealModel) {
  auto session = Session::load_from_bytes(testing::add_mul_model());
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  auto c = config("max_batch_size: 4");
  ASSERT_TRUE(complete_model_config((*session)->inputs(), (*session)->outputs(), &c).ok());
  ASSERT_EQ(c.input_size(), 1);
  EXPECT_EQ(c.input(0).name(), "x");
  EXPECT_EQ(c.input(0).data_type(), inference::TYPE_FP32);
  ASSERT_EQ(c.input(0).dims_size(), 1);  // batch dim removed
  EXPECT_EQ(c.input(0).dims(0), 3);
  ASSERT_EQ(c.output_size(), 2);
  EXPECT_EQ(c.output(1).name(), "z");
  EXPECT_EQ(c.output(1).dims_size(), 1);
}

TEST(ModelConfigComplete, WithoutBatchingKeepsAllDims) {
  auto c = config("");
  ASSERT_TRUE(complete_model_config({info("x", DType::kInt64, {-1, 5})}, {}, &c).ok());
  ASSERT_EQ(c.input(0).dims_size(), 2);
  EXPECT_EQ(c.input(0).dims(0), -1);
  EXPECT_EQ(c.input(0).data_type(), inference::TYPE_INT64);
}

TEST(ModelConfigComplete, FixedBatchDimIsAnError) {
  auto c = config("max_batch_size: 8");
  Status st = complete_model_config({info("x", DType::kFloat32, {2, 3})}, {}, &c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("input 'x'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("fixed at 2"), std::string::npos) << st.message();
}

TEST(ModelConfigComplete, DeclaredTensorsMustMatch) {
  const std::vector<TensorInfo> ins = {info("x", DType::kFloat32, {-1, 3})};
  const std::vector<TensorInfo> outs = {info("y", DType::kFloat32, {-1, 3})};
  struct Case {
    const char* text;
    const char* fragment;
  } cases[] = {
      {"max_batch_size: 2 input [ { name: \"q\" data_type: TYPE_FP32 dims: [3] } ]",
       "input 'q' is declared in config.pbtxt but the model has no such input"},
      {"max_batch_size: 2 input [ { name: \"x\" data_type: TYPE_INT32 dims: [3] } ]",
       "input 'x': data_type TYPE_INT32 does not match the model's TYPE_FP32"},
      {"max_batch_size: 2 input [ { name: \"x\" data_type: TYPE_FP32 dims: [3, 1] } ]",
       "input 'x': 2 dims"},
      {"max_batch_size: 2 input [ { name: \"x\" data_type: TYPE_FP32 dims: [4] } ]",
       "input 'x': dim 0 is 4 but the model has 3"},
      {"max_batch_size: 2 output [ { name: \"w\" data_type: TYPE_FP32 dims: [3] } ]",
       "output 'w' is declared"},
      {"input [ { name: \"x\" data_type: TYPE_FP32 dims: [3] } ]", "input 'x': 1 dims"},
  };
  for (const auto& k : cases) {
    auto c = config(k.text);
    Status st = complete_model_config(ins, outs, &c);
    ASSERT_FALSE(st.ok()) << k.text;
    EXPECT_NE(st.message().find(k.fragment), std::string::npos)
        << k.text << " -> " << st.message();
  }
  auto good = config("max_batch_size: 2 input [ { name: \"x\" data_type: TYPE_FP32 dims: [-1] } ]");
  EXPECT_TRUE(complete_model_config(ins, outs, &good).ok());
  EXPECT_EQ(good.output_size(), 1);  // outputs still completed
}

TEST(ModelConfigComplete, UndeclaredModelInputIsAnError) {
  auto c = config("input [ { name: \"x\" data_type: TYPE_FP32 dims: [-1, 3] } ]");
  Status st = complete_model_config(
      {info("x", DType::kFloat32, {-1, 3}), info("k", DType::kFloat32, {1})}, {}, &c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("model input 'k' is missing"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace osprey::server
