#include "core/fixed_shape_model.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "osprey/session.h"
#include "osprey_onnx/onnx.pb.h"

namespace osprey::bench {
namespace {

namespace fs = std::filesystem;

std::string temp_dir(const std::string& name) {
  const std::string d = ::testing::TempDir() + "/osprey_fixed_shape_" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// One declared dim: > 0 fixed, 0 unknown (neither value nor name), < 0 named `sym`.
void add_dim(onnx::TensorShapeProto* s, int64_t d, const std::string& sym) {
  auto* dim = s->add_dim();
  if (d > 0) dim->set_dim_value(d);
  if (d < 0) dim->set_dim_param(sym);
}

// logits = Relu(x) @ w, x: float[x_dims], w: float[4,3]; logits declared [N, 3].
onnx::ModelProto mlp(const std::vector<int64_t>& x_dims) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("mlp");
  auto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : x_dims)
    add_dim(x->mutable_type()->mutable_tensor_type()->mutable_shape(), d, "N");
  auto* y = g->add_output();
  y->set_name("logits");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  add_dim(y->mutable_type()->mutable_tensor_type()->mutable_shape(), -1, "N");
  add_dim(y->mutable_type()->mutable_tensor_type()->mutable_shape(), 3, "");
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->add_dims(3);
  for (int i = 0; i < 12; ++i) w->add_float_data(0.1f * static_cast<float>(i) - 0.55f);
  auto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->add_input("x");
  relu->add_output("h");
  auto* mm = g->add_node();
  mm->set_op_type("MatMul");
  mm->add_input("h");
  mm->add_input("w");
  mm->add_output("logits");
  return m;
}

std::string save(const onnx::ModelProto& m, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  m.SerializeToOstream(&out);
  return path;
}

onnx::ModelProto load_proto(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromIstream(&in)) << path;
  return m;
}

InputDesc x_desc(Shape shape) {
  return {"x", DType::kFloat32, std::move(shape), "test"};
}

TEST(FixedShapeModel, FixesSymbolicAndUnknownDimsAndRunsTheSame) {
  const std::string dir = temp_dir("fix");
  const std::string model = save(mlp({-1, 0}), dir + "/mlp.onnx");  // x: [N, ?]
  auto fixed = write_fixed_shape_model(model, {x_desc({2, 4})}, dir + "/mlp_fixed.onnx");
  ASSERT_TRUE(fixed.ok()) << fixed.status().message();
  EXPECT_TRUE(fixed->copied);
  EXPECT_EQ(fixed->path, dir + "/mlp_fixed.onnx");
  EXPECT_NE(fixed->note.find("x: N -> 2, ? -> 4"), std::string::npos) << fixed->note;

  const onnx::ModelProto copy = load_proto(fixed->path);
  const auto& dims = copy.graph().input(0).type().tensor_type().shape().dim();
  ASSERT_EQ(dims.size(), 2);
  EXPECT_EQ(dims[0].dim_value(), 2);
  EXPECT_EQ(dims[1].dim_value(), 4);
  EXPECT_TRUE(dims[0].dim_param().empty());
  // Outputs keep their symbols; the graph is otherwise the same.
  EXPECT_EQ(copy.graph().output(0).type().tensor_type().shape().dim(0).dim_param(), "N");
  EXPECT_EQ(copy.graph().node_size(), 2);
  // The original file is untouched.
  EXPECT_EQ(load_proto(model).graph().input(0).type().tensor_type().shape().dim(0).dim_param(),
            "N");

  SessionOptions one;
  one.threads = 1;
  auto a = Session::load(model, one);
  auto b = Session::load(fixed->path, one);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  const TensorInfo& in = (*b)->inputs()[0];
  ASSERT_EQ(in.shape.size(), 2u);
  EXPECT_EQ(in.to_string(), "x: float32[2,4]");
  Tensor x(DType::kFloat32, {2, 4});
  for (int64_t i = 0; i < 8; ++i) x.data<float>()[i] = 0.3f * static_cast<float>(i) - 1.0f;
  auto ra = (*a)->run({{"x", x}});
  auto rb = (*b)->run({{"x", x}});
  ASSERT_TRUE(ra.ok() && rb.ok());
  const Tensor& ya = (*ra)[0].second;
  const Tensor& yb = (*rb)[0].second;
  ASSERT_EQ(ya.shape(), (Shape{2, 3}));
  ASSERT_EQ(yb.shape(), ya.shape());
  EXPECT_EQ(std::memcmp(ya.raw_data(), yb.raw_data(), ya.nbytes()), 0);
  // The fixed copy refuses another batch: its input really is fixed.
  Tensor x3(DType::kFloat32, {3, 4});
  EXPECT_FALSE((*b)->run({{"x", x3}}).ok());
}

TEST(FixedShapeModel, AlreadyFixedInputsRunTheModelAsGiven) {
  const std::string dir = temp_dir("same");
  const std::string model = save(mlp({2, 4}), dir + "/mlp.onnx");
  auto fixed = write_fixed_shape_model(model, {x_desc({2, 4})}, dir + "/copy.onnx");
  ASSERT_TRUE(fixed.ok()) << fixed.status().message();
  EXPECT_FALSE(fixed->copied);
  EXPECT_EQ(fixed->path, model);
  EXPECT_NE(fixed->note.find("already"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir + "/copy.onnx"));
}

TEST(FixedShapeModel, MismatchesAreClearErrors) {
  const std::string dir = temp_dir("bad");
  const std::string model = save(mlp({-1, 4}), dir + "/mlp.onnx");
  const std::string out = dir + "/copy.onnx";
  auto rank = write_fixed_shape_model(model, {x_desc({2, 4, 1})}, out);
  EXPECT_EQ(rank.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rank.status().message().find("rank 2"), std::string::npos) << rank.status().message();
  auto dim = write_fixed_shape_model(model, {x_desc({2, 5})}, out);
  EXPECT_EQ(dim.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dim.status().message().find("dim 1 is fixed to 4"), std::string::npos);
  auto name = write_fixed_shape_model(model, {{"nope", DType::kFloat32, {2, 4}, ""}}, out);
  EXPECT_EQ(name.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(name.status().message().find("'nope'"), std::string::npos);
  EXPECT_EQ(write_fixed_shape_model(dir + "/missing.onnx", {x_desc({2, 4})}, out).status().code(),
            StatusCode::kNotFound);
  EXPECT_FALSE(fs::exists(out));
}

TEST(FixedShapeModel, ExternalDataIsRefused) {
  const std::string dir = temp_dir("ext");
  onnx::ModelProto m = mlp({-1, 4});
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("w.bin");
  const std::string model = save(m, dir + "/mlp.onnx");
  auto fixed = write_fixed_shape_model(model, {x_desc({2, 4})}, dir + "/copy.onnx");
  EXPECT_EQ(fixed.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(fixed.status().message().find("external data"), std::string::npos);
}

}  // namespace
}  // namespace osprey::bench
