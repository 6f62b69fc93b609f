// Model loading: the importer releases each tensor's data from the proto as it converts it,
// Session::load parses the file as it reads it, and a load's peak allocation stays well below
// "serialized model + parsed model + tensors" (measured with a counting operator new).
#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>

#include "model_builder.h"
#include "onnx/onnx_internal.h"
#include "osprey/session.h"

// Counts the bytes held through operator new (protobuf's strings, the tensors' blocks, ...).
namespace {
std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_peak_bytes{0};

void* counted(void* p) {
  if (!p) throw std::bad_alloc();
  const int64_t now = g_live_bytes += static_cast<int64_t>(malloc_usable_size(p));
  int64_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (now > peak && !g_peak_bytes.compare_exchange_weak(peak, now)) {
  }
  return p;
}

void uncounted(void* p) {
  if (!p) return;
  g_live_bytes -= static_cast<int64_t>(malloc_usable_size(p));
  std::free(p);
}

void* aligned(std::size_t n, std::align_val_t a) {
  const auto align = static_cast<std::size_t>(a);
  return std::aligned_alloc(align, (n + align - 1) / align * align);
}
}  // namespace

void* operator new(std::size_t n) { return counted(std::malloc(n ? n : 1)); }
void* operator new[](std::size_t n) { return counted(std::malloc(n ? n : 1)); }
void* operator new(std::size_t n, std::align_val_t a) { return counted(aligned(n ? n : 1, a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted(aligned(n ? n : 1, a)); }
void operator delete(void* p) noexcept { uncounted(p); }
void operator delete[](void* p) noexcept { uncounted(p); }
void operator delete(void* p, std::size_t) noexcept { uncounted(p); }
void operator delete[](void* p, std::size_t) noexcept { uncounted(p); }
void operator delete(void* p, std::align_val_t) noexcept { uncounted(p); }
void operator delete[](void* p, std::align_val_t) noexcept { uncounted(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { uncounted(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { uncounted(p); }

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
  PeakScope() : start_((trim_memory(), g_live_bytes.load())) { g_peak_bytes = start_; }
  int64_t peak_above_start() const { return g_peak_bytes.load() - start_; }

 private:
  int64_t start_;
};

float weight_value(int w, int64_t i) { return static_cast<float>(w + 1) * 0.5f + static_cast<float>(i % 5); }

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
  EXPECT_LT(peak, kWeightBytes * 8 / 5) << "peak " << peak << " bytes for " << kWeightBytes
                                        << " bytes of weights";
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
  // Reading the file into memory first would add kWeightBytes (at least) to this.
  EXPECT_LT(peak, kWeightBytes * 8 / 5) << "peak " << peak << " bytes for " << kWeightBytes
                                        << " bytes of weights";
  expect_chain_output(*s);
  auto from_bytes = Session::load_from_bytes(chain_model().bytes());
  ASSERT_TRUE(from_bytes.ok());
  EXPECT_EQ(s->stats().parameter_bytes, (*from_bytes)->stats().parameter_bytes);
  EXPECT_EQ(s->stats().node_count, (*from_bytes)->stats().node_count);
  EXPECT_EQ(s->graph_dump(), (*from_bytes)->graph_dump());
}

TEST(ModelLoadMemoryTest, LoadFromFileReadsExternalDataBesideTheModel) {
  const std::string path = temp_path("external.onnx");
  const float vals[2] = {1.5f, -2.0f};
  write_file(temp_path("external_w.bin"), std::string(reinterpret_cast<const char*>(vals), sizeof(vals)));
  ModelBuilder m;
  m.input("x", kF, {2}).output("y");
  auto& w = m.initializer("w", {2}, {});
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w.add_external_data();
  kv->set_key("location");
  kv->set_value("external_w.bin");
  m.node("Add", {"x", "w"}, {"y"});
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
  EXPECT_NE(s.status().message().find("model is empty (0 bytes)"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find(empty), std::string::npos) << s.status().message();

  const std::string good = chain_model().bytes();
  const std::string truncated = temp_path("truncated.onnx");
  write_file(truncated, good.substr(0, good.size() / 2));
  s = Session::load(truncated);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("not a valid ONNX protobuf"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find(truncated), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace osprey
