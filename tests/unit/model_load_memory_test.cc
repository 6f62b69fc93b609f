// Model loading: the importer releases each tensor's data from the proto as it converts it,
// Session::load reads the main graph's weights from the file straight into their tensors, and a
// load's peak allocation stays well below "serialized model + parsed model + tensors"
// (measured with the test binary's counting operator new, counting_new.h).
#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>

#include "counting_new.h"
#include "model_builder.h"
#include "onnx/onnx_internal.h"
#include "osprey/session.h"
#include "test_models.h"



namespace osprey {
namespace {

using testing::ModelBuilder;
constexpr int kF = onnx::TensorProto::FLOAT;
constexpr int kWeights = 4;
constexpr int64_t kWeightElems = int64_t{1} << 20;  // 4 MiB of float32 per weight
constexpr int64_t kWeightBytes = kWeights * kWeightElems * 4;

// Peak bytes held above the level at construction. Cached tensor blocks are given back first,
// so that every tensor the load makes is a new allocation and counts.
class PeakScope {
 public:
  PeakScope() : start_((trim_memory(), testing::live_heap_bytes())) { testing::reset_peak_heap_bytes(start_); }
  int64_t peak_above_start() const { return testing::peak_heap_bytes() - start_; }

 private:
  int64_t start_;
};

float weight_value(int w, int64_t i) {
  return static_cast<float>(w + 1) * 0.5f + static_cast<float>(i % 5);
}

// y = x + w0 + w1 + w2 + w3 (each w a float[kWeightElems] in raw_data) + c, c a Constant node.
ModelBuilder chain_model() {
  ModelBuilder m;
  m.input("x", kF, {kWeightElems}).output("y");
  std::string prev = "x";
  for (int w = 0; w < kWeights; ++w) {
    auto& t = m.initializer("w" + std::to_string(w), {kWeightElems}, {});
    std::vector<float> v(static_cast<size_t>(kWeightElems));
    for (int64_t i = 0; i < kWeightElems; ++i) v[static_cast<size_t>(i)] = weight_value(w, i);
    t.set_raw_data(v.data(), v.size() * sizeof(float));
    const std::string out = "s" + std::to_string(w);
    m.node("Add", {prev, "w" + std::to_string(w)}, {out});
    prev = out;
  }
  auto& c = m.node("Constant", {}, {"c"});
  auto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(kF);
  a->mutable_t()->add_dims(1);
  const float cv = 100.0f;
  a->mutable_t()->set_raw_data(&cv, sizeof(cv));
  m.node("Add", {prev, "c"}, {"y"});
  return m;
}

void expect_chain_output(Session& s) {
  auto out = s.run({{"x", Tensor::from_vector<float>(std::vector<float>(kWeightElems, 1.0f))}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const Tensor& y = (*out)[0].second;
  ASSERT_EQ(y.numel(), kWeightElems);
  for (int64_t i : {int64_t{0}, int64_t{3}, kWeightElems - 1}) {
    float want = 1.0f;
    for (int w = 0; w < kWeights; ++w) want += weight_value(w, i);
    EXPECT_FLOAT_EQ(y.data<float>()[i], want + 100.0f) << "element " << i;
  }
}

std::string temp_path(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/osprey_model_load";
  std::filesystem::create_directories(dir);
  return dir + "/" + name;
}

void write_file(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

TEST(ModelLoadMemoryTest, ImportReleasesTensorDataFromTheProto) {
  ModelBuilder m = chain_model();
  auto imported = onnx_import::import_model_proto(m.proto(), "", SessionOptions{});
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  const auto& g = m.proto().graph();
  ASSERT_EQ(g.initializer_size(), kWeights);
  for (const auto& init : g.initializer()) {
    EXPECT_FALSE(init.has_raw_data()) << init.name();
    EXPECT_LT(init.raw_data().capacity(), 64u) << init.name() << " still holds its bytes";
    EXPECT_EQ(init.dims(0), kWeightElems) << "the tensor's description stays";
  }
  EXPECT_LT(g.node(kWeights).attribute(0).t().raw_data().capacity(), 64u) << "Constant's value";
  // The tensors hold the data the proto gave up.
  const ir::Graph& graph = *imported->graph;
  ASSERT_EQ(graph.initializers.size(), static_cast<size_t>(kWeights));
  for (const auto& [id, t] : graph.initializers) {
    const std::string& name = graph.values[static_cast<size_t>(id)].name;
    const int w = name[1] - '0';
    for (int64_t i : {int64_t{0}, int64_t{7}, kWeightElems - 1})
      EXPECT_FLOAT_EQ(t.data<float>()[i], weight_value(w, i)) << name << "[" << i << "]";
  }
  EXPECT_EQ(imported->stats.parameter_bytes, kWeightBytes + 4);
}

TEST(ModelLoadMemoryTest, ImportReleasesTypedDataFields) {
  ModelBuilder m;
  m.input("x", kF, {3}).output("y");
  m.initializer("w", {3}, {1.0f, 2.0f, 3.0f});
  m.node("Add", {"x", "w"}, {"y"});
  auto imported = onnx_import::import_model_proto(m.proto(), "", SessionOptions{});
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  EXPECT_EQ(m.proto().graph().initializer(0).float_data_size(), 0);
  EXPECT_EQ(m.proto().graph().initializer(0).float_data().Capacity(), 0);
  const Tensor& w = imported->graph->initializers.begin()->second;
  EXPECT_FLOAT_EQ(w.data<float>()[2], 3.0f);
}

TEST(ModelLoadMemoryTest, FailedConversionKeepsTheDataAndNamesTheTensor) {
  onnx::TensorProto p;
  p.set_name("bad");
  p.set_data_type(kF);
  p.add_dims(4);
  p.set_raw_data(std::string(12, '\0'));  // 3 floats for a shape of 4
  auto t = onnx_import::take_tensor_from_proto(&p, "", 0);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("'bad'"), std::string::npos) << t.status().message();
  EXPECT_EQ(p.raw_data().size(), 12u);
}

TEST(ModelLoadMemoryTest, LoadFromBytesHoldsEachWeightTwiceAtMostOneAtATime) {
  const std::string bytes = chain_model().bytes();
  std::unique_ptr<Session> s;
  int64_t peak = 0;
  {
    PeakScope scope;
    auto loaded = Session::load_from_bytes(bytes);
    peak = scope.peak_above_start();
    ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
    s = std::move(*loaded);
  }
  // The parsed proto (kWeightBytes) plus one converted weight, not the proto plus all the
  // tensors (2 x kWeightBytes).
  EXPECT_LT(peak, kWeightBytes * 8 / 5)
      << "peak " << peak << " bytes for " << kWeightBytes << " bytes of weights";
  expect_chain_output(*s);
}

TEST(ModelLoadMemoryTest, LoadFromFileNeverHoldsTheFileNextToTheModel) {
  const std::string path = temp_path("chain.onnx");
  write_file(path, chain_model().bytes());
  std::unique_ptr<Session> s;
  int64_t peak = 0;
  {
    PeakScope scope;
    auto loaded = Session::load(path);
    peak = scope.peak_above_start();
    ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
    s = std::move(*loaded);
  }
  // The weights are read from the file straight into their tensors: held once. Reading the
  // file into memory first, or parsing the weights into the proto, would add kWeightBytes.
  EXPECT_LT(peak, kWeightBytes * 6 / 5)
      << "peak " << peak << " bytes for " << kWeightBytes << " bytes of weights";
  expect_chain_output(*s);
  auto from_bytes = Session::load_from_bytes(chain_model().bytes());
  ASSERT_TRUE(from_bytes.ok());
  EXPECT_EQ(s->stats().parameter_bytes, (*from_bytes)->stats().parameter_bytes);
  EXPECT_EQ(s->stats().node_count, (*from_bytes)->stats().node_count);
  EXPECT_EQ(s->graph_dump(), (*from_bytes)->graph_dump());
}

// Imports `m` from a file and from bytes; the two must agree on every initializer.
void expect_file_import_matches_bytes(ModelBuilder& m, const std::string& name) {
  const std::string path = temp_path(name);
  write_file(path, m.bytes());
  auto file = onnx_import::ModelFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  auto from_file = onnx_import::import_model_file(*file, "", SessionOptions{});
  auto from_bytes = onnx_import::import_model(m.bytes(), "", SessionOptions{});
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status().to_string();
  ASSERT_TRUE(from_file.ok()) << from_file.status().to_string();
  const ir::Graph& a = *from_file->graph;
  const ir::Graph& b = *from_bytes->graph;
  ASSERT_EQ(a.initializers.size(), b.initializers.size());
  for (const auto& [id, t] : b.initializers) {
    const std::string& vname = b.values[static_cast<size_t>(id)].name;
    const int fid = a.find_value(vname);
    ASSERT_TRUE(a.initializers.count(fid)) << vname;
    const Tensor& u = a.initializers.at(fid);
    EXPECT_EQ(u.dtype(), t.dtype()) << vname;
    EXPECT_EQ(u.shape(), t.shape()) << vname;
    ASSERT_EQ(u.nbytes(), t.nbytes()) << vname;
    EXPECT_EQ(std::memcmp(u.raw_data(), t.raw_data(), t.nbytes()), 0) << vname;
  }
  EXPECT_EQ(from_file->stats.parameter_bytes, from_bytes->stats.parameter_bytes);
}

TEST(ModelLoadMemoryTest, FileImportReadsEveryKindOfInitializerAsBytesImportDoes) {
  ModelBuilder m;
  m.input("x", kF, {2}).output("y");
  m.initializer("typed", {2}, {0.5f, -1.5f});  // float_data, not raw_data
  auto& flags = m.initializer("flags", {3}, {});
  flags.set_data_type(onnx::TensorProto::BOOL);
  flags.set_raw_data(std::string("\x00\x02\x01", 3));  // 2 reads as true (1)
  auto& empty = m.initializer("empty", {0}, {});
  empty.set_raw_data("");
  auto& twice = m.initializer("twice", {1}, {});
  const float first = 1.0f, second = 2.0f;
  twice.set_raw_data(&first, sizeof(first));
  twice.mutable_unknown_fields()->append("J\x04", 2);  // raw_data (field 9) again:
  twice.mutable_unknown_fields()->append(reinterpret_cast<const char*>(&second), 4);  // last wins
  m.node("Add", {"x", "typed"}, {"y"});
  expect_file_import_matches_bytes(m, "kinds.onnx");

  auto file = onnx_import::ModelFile::open(temp_path("kinds.onnx"));
  ASSERT_TRUE(file.ok());
  auto imported = onnx_import::import_model_file(*file, "", SessionOptions{});
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  const ir::Graph& g = *imported->graph;
  const Tensor& f = g.initializers.at(g.find_value("flags"));
  EXPECT_EQ(f.data<bool>()[1], true);
  EXPECT_EQ(static_cast<const uint8_t*>(f.raw_data())[1], 1);
  EXPECT_FLOAT_EQ(g.initializers.at(g.find_value("twice")).data<float>()[0], 2.0f);
}

TEST(ModelLoadMemoryTest, FileImportMatchesBytesImportOnTheChainModel) {
  ModelBuilder m = chain_model();
  expect_file_import_matches_bytes(m, "chain_compare.onnx");
}

TEST(ModelLoadMemoryTest, FileImportReportsWrongSizedRawDataAsBytesImportDoes) {
  ModelBuilder m;
  m.input("x", kF, {4}).output("y");
  auto& w = m.initializer("w", {4}, {});
  w.set_raw_data(std::string(12, '\0'));  // 3 floats for a shape of 4
  m.node("Add", {"x", "w"}, {"y"});
  const std::string path = temp_path("short_raw.onnx");
  write_file(path, m.bytes());
  auto file = onnx_import::ModelFile::open(path);
  ASSERT_TRUE(file.ok());
  auto from_file = onnx_import::import_model_file(*file, "", SessionOptions{});
  auto from_bytes = onnx_import::import_model(m.bytes(), "", SessionOptions{});
  ASSERT_FALSE(from_file.ok());
  ASSERT_FALSE(from_bytes.ok());
  EXPECT_EQ(from_file.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(from_file.status().message(), from_bytes.status().message());
  EXPECT_NE(from_file.status().message().find("tensor 'w'"), std::string::npos)
      << from_file.status().message();
}

TEST(ModelLoadMemoryTest, FileImportAcceptsExactlyThePrefixesBytesImportAccepts) {
  ModelBuilder m;
  m.input("x", kF, {16}).output("y");
  std::string prev = "x";
  for (int w = 0; w < 3; ++w) {
    auto& t = m.initializer("w" + std::to_string(w), {16}, {});
    std::vector<float> v(16, static_cast<float>(w));
    t.set_raw_data(v.data(), v.size() * sizeof(float));
    const std::string out = w == 2 ? "y" : "s" + std::to_string(w);
    m.node("Add", {prev, "w" + std::to_string(w)}, {out});
    prev = out;
  }
  const std::string good = m.bytes();
  const std::string path = temp_path("prefix.onnx");
  for (size_t n = 1; n < good.size(); ++n) {
    const std::string prefix = good.substr(0, n);
    write_file(path, prefix);
    auto file = onnx_import::ModelFile::open(path);
    ASSERT_TRUE(file.ok());
    auto from_file = onnx_import::import_model_file(*file, "", SessionOptions{});
    auto from_bytes = onnx_import::import_model(prefix, "", SessionOptions{});
    ASSERT_EQ(from_file.ok(), from_bytes.ok())
        << "first " << n << " of " << good.size() << " bytes: file says '"
        << from_file.status().message() << "', bytes say '" << from_bytes.status().message() << "'";
    if (!from_file.ok()) {
      EXPECT_EQ(from_file.status().code(), from_bytes.status().code()) << n;
    }
  }
}

TEST(ModelLoadMemoryTest, LoadFromFileReadsExternalDataBesideTheModel) {
  const std::string path = temp_path("external.onnx");
  const float vals[2] = {1.5f, -2.0f};
  write_file(temp_path("external_w.bin"),
             std::string(reinterpret_cast<const char*>(vals), sizeof(vals)));
  ModelBuilder m = testing::external_data_model("external_w.bin");
  write_file(path, m.bytes());
  auto s = Session::load(path);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto out = (*s)->run({{"x", Tensor::from_vector<float>({1, 1})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_FLOAT_EQ((*out)[0].second.data<float>()[0], 2.5f);
  EXPECT_FLOAT_EQ((*out)[0].second.data<float>()[1], -1.0f);
}

TEST(ModelLoadMemoryTest, LoadFromFileErrorsNameTheFileAndTheProblem) {
  const std::string missing = temp_path("missing.onnx");
  std::filesystem::remove(missing);
  auto s = Session::load(missing);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_NE(s.status().message().find("file not found or not a regular file: " + missing),
            std::string::npos)
      << s.status().message();

  const std::string dir = temp_path("a_directory.onnx");
  std::filesystem::create_directories(dir);
  EXPECT_EQ(Session::load(dir).status().code(), StatusCode::kNotFound);

  const std::string empty = temp_path("empty.onnx");
  write_file(empty, "");
  s = Session::load(empty);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("model is empty (0 bytes)"), std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find(empty), std::string::npos) << s.status().message();

  const std::string good = chain_model().bytes();
  const std::string truncated = temp_path("truncated.onnx");
  write_file(truncated, good.substr(0, good.size() / 2));
  s = Session::load(truncated);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("not a valid ONNX protobuf"), std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find(truncated), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace osprey
