// The Server end to end on tiny real ONNX models in a temporary repository.
#include "core/server_impl.h"

#include <gtest/gtest.h>

#include <future>

#include "core/osprey_backend.h"
#include "osprey_server/model_config.pb.h"
#include "test_util.h"

namespace osprey::server {
namespace {

using testing::bytes_to_floats;
using testing::floats_to_bytes;
using testing::TempDir;
using testing::find_output;
using testing::make_test_server;

constexpr const char* kBatchingConfig = R"(
max_batch_size: 8
instance_group [ { count: 1 kind: KIND_CPU } ]
dynamic_batching { preferred_batch_size: [ 4 ] max_queue_delay_microseconds: 2000000 }
)";

InferRequest request(const std::string& model, std::vector<float> x, int64_t rows) {
  return testing::add_mul_request(model, x, rows);
}

struct ServerTest : ::testing::Test {
  void SetUp() override {
    repo.write("addmul/config.pbtxt", kBatchingConfig);
    repo.write("addmul/1/model.onnx", testing::add_mul_model());
    repo.write("plain/1/model.onnx", testing::add_mul_model());  // no config: auto-complete
    server = make_test_server(repo);
    ASSERT_NE(server, nullptr);
  }
  TempDir repo;
  std::unique_ptr<ServerImpl> server;
};

TEST_F(ServerTest, InferReturnsTheEngineResult) {
  ASSERT_TRUE(server->ready());
  auto r = server->infer(request("plain", {1, 2, 3, 4, 5, 6}, 2));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->model_name, "plain");
  EXPECT_EQ(r->model_version, "1");
  const WireTensor* y = find_output(*r, "y");
  const WireTensor* z = find_output(*r, "z");
  ASSERT_TRUE(y && z);
  EXPECT_EQ(y->datatype, "FP32");
  EXPECT_EQ(y->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(bytes_to_floats(y->data), (std::vector<float>{2, 4, 6, 5, 7, 9}));
  EXPECT_EQ(bytes_to_floats(z->data), (std::vector<float>{1, 4, 9, 4, 10, 18}));
  // Only the requested output, by name.
  InferRequest only_z = request("plain", {1, 1, 1}, 1);
  only_z.outputs.push_back({"z", {}});
  auto rz = server->infer(only_z);
  ASSERT_TRUE(rz.ok());
  ASSERT_EQ(rz->outputs.size(), 1u);
  EXPECT_EQ(rz->outputs[0].name, "z");
}

TEST_F(ServerTest, BatchedRequestsConcatenateAndSplit) {
  // 1 + 2 + 1 rows reach the preferred batch size 4: one execution.
  std::vector<std::future<Result<InferResponse>>> futures;
  std::vector<std::vector<float>> inputs = {{1, 1, 1}, {2, 2, 2, 3, 3, 3}, {4, 4, 4}};
  std::vector<int64_t> rows = {1, 2, 1};
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto p = std::make_shared<std::promise<Result<InferResponse>>>();
    futures.push_back(p->get_future());
    server->infer_async(request("addmul", inputs[i], rows[i]),
                        [p](Result<InferResponse> r) { p->set_value(std::move(r)); });
  }
  for (size_t i = 0; i < futures.size(); ++i) {
    auto r = futures[i].get();
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    const WireTensor* y = find_output(*r, "y");
    ASSERT_NE(y, nullptr);
    EXPECT_EQ(y->shape, (std::vector<int64_t>{rows[i], 3}));
    std::vector<float> want;
    for (size_t k = 0; k < inputs[i].size(); ++k) want.push_back(inputs[i][k] + float(k % 3 + 1));
    EXPECT_EQ(bytes_to_floats(y->data), want) << "request " << i;
  }
  auto stats = server->statistics("addmul", "");
  ASSERT_TRUE(stats.ok());
  ASSERT_EQ(stats->size(), 1u);
  EXPECT_EQ((*stats)[0].execution_count, 1u);
  EXPECT_EQ((*stats)[0].inference_count, 4u);
  EXPECT_EQ((*stats)[0].inference_stats.success.count, 3u);
  ASSERT_EQ((*stats)[0].batch_stats.size(), 1u);
  EXPECT_EQ((*stats)[0].batch_stats[0].batch_size, 4u);
  std::string metrics = server->prometheus_metrics();
  EXPECT_NE(metrics.find("osprey_inference_request_success_total{model=\"addmul\",version=\"1\"} 3"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("osprey_inference_exec_count_total{model=\"addmul\",version=\"1\"} 1"),
            std::string::npos);
}

TEST_F(ServerTest, BadInputsAreInvalidArgumentNamingTheInput) {
  struct Case {
    InferRequest req;
    const char* fragment;
  };
  std::vector<Case> cases;
  auto base = [] { return request("plain", {1, 2, 3}, 1); };
  cases.push_back({base(), ""});
  cases.back().req.inputs[0].name = "q";
  cases.back().fragment = "input 'q'";
  cases.push_back({base(), "input 'x': datatype INT32"});
  cases.back().req.inputs[0].datatype = "INT32";
  cases.push_back({base(), "input 'x': shape [1,4]"});
  cases.back().req.inputs[0].shape = {1, 4};
  cases.push_back({base(), "input 'x': 8 bytes"});
  cases.back().req.inputs[0].data.resize(8);
  cases.push_back({base(), "input 'x' is required"});
  cases.back().req.inputs.clear();
  cases.push_back({base(), "output 'w'"});
  cases.back().req.outputs.push_back({"w", {}});
  for (auto& c : cases) {
    auto r = server->infer(c.req);
    ASSERT_FALSE(r.ok()) << c.fragment;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().to_string();
    EXPECT_NE(r.status().message().find(c.fragment), std::string::npos) << r.status().message();
  }
  auto over = request("addmul", std::vector<float>(27, 1.f), 9);  // max_batch_size 8
  auto r = server->infer(over);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("max_batch_size 8"), std::string::npos) << r.status().message();
  auto stats = server->statistics("plain", "1");
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ((*stats)[0].inference_stats.fail.count, cases.size());
}

TEST_F(ServerTest, UnknownModelOrVersionIsNotFound) {
  auto r = server->infer(request("nope", {1, 2, 3}, 1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("'nope'"), std::string::npos);
  auto req = request("plain", {1, 2, 3}, 1);
  req.model_version = "7";
  r = server->infer(req);
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(server->model_metadata("nope", "").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(server->model_ready("nope", "").status().code(), StatusCode::kNotFound);
}

TEST_F(ServerTest, MetadataAndConfigComeFromTheCompletedConfig) {
  auto md = server->model_metadata("addmul", "");
  ASSERT_TRUE(md.ok()) << md.status().to_string();
  EXPECT_EQ(md->platform, "onnxruntime_onnx");
  EXPECT_EQ(md->versions, (std::vector<std::string>{"1"}));
  ASSERT_EQ(md->inputs.size(), 1u);
  EXPECT_EQ(md->inputs[0].datatype, "FP32");
  EXPECT_EQ(md->inputs[0].shape, (std::vector<int64_t>{-1, 3}));
  inference::ModelConfig c;
  ASSERT_TRUE(server->model_config("addmul", "1", &c).ok());
  EXPECT_EQ(c.max_batch_size(), 8);
  ASSERT_EQ(c.output_size(), 2);
  auto idx = server->repository_index(false);
  ASSERT_EQ(idx.size(), 2u);
  EXPECT_EQ(idx[0].name, "addmul");
  EXPECT_EQ(idx[0].state, "READY");
}

TEST_F(ServerTest, ShutdownRefusesNewRequests) {
  server->shutdown();
  EXPECT_FALSE(server->ready());
  auto r = server->infer(request("plain", {1, 2, 3}, 1));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
}

TEST(ServerLoad, BadModelIsReportedNotFatal) {
  TempDir repo;
  repo.write("good/1/model.onnx", testing::add_mul_model());
  repo.write("garbage/1/model.onnx", "not onnx");
  repo.write("gpu/config.pbtxt", "instance_group [ { kind: KIND_GPU } ]");
  repo.write("gpu/1/model.onnx", testing::add_mul_model());
  repo.write("warm/config.pbtxt",
             "max_batch_size: 2 model_warmup [ { name: \"w\" batch_size: 2 inputs { key: \"q\" "
             "value { data_type: TYPE_FP32 dims: [3] zero_data: true } } } ]");
  repo.write("warm/1/model.onnx", testing::add_mul_model());
  auto server = make_test_server(repo);
  ASSERT_NE(server, nullptr);
  EXPECT_FALSE(server->ready());  // not every startup model loaded
  std::map<std::string, RepositoryEntry> by_name;
  for (auto& e : server->repository_index(false)) by_name[e.name] = e;
  EXPECT_EQ(by_name["good"].state, "READY");
  EXPECT_EQ(by_name["garbage"].state, "UNAVAILABLE");
  EXPECT_FALSE(by_name["garbage"].reason.empty());
  EXPECT_NE(by_name["gpu"].reason.find("KIND_GPU"), std::string::npos) << by_name["gpu"].reason;
  EXPECT_NE(by_name["warm"].reason.find("warmup 'w'"), std::string::npos) << by_name["warm"].reason;
  EXPECT_NE(by_name["warm"].reason.find("input 'q'"), std::string::npos) << by_name["warm"].reason;
}

TEST(ServerLoad, WarmupRunsBeforeReady) {
  TempDir repo;
  repo.write("warm/config.pbtxt",
             "max_batch_size: 2 model_warmup [ { name: \"w\" batch_size: 2 count: 3 inputs { key: "
             "\"x\" value { data_type: TYPE_FP32 dims: [3] random_data: true } } } ]");
  repo.write("warm/1/model.onnx", testing::add_mul_model());
  auto server = make_test_server(repo);
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(server->ready());
  // Warmup executions are not counted as inference statistics.
  auto stats = server->statistics("warm", "");
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ((*stats)[0].execution_count, 0u);
}

TEST(ServerPoll, NoticesAddedChangedAndRemovedModels) {
  TempDir repo;
  repo.write("a/1/model.onnx", testing::add_mul_model());
  auto server = make_test_server(repo, ModelControlMode::kPoll);
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(server->model_ready("a", "").value());
  // Added model.
  repo.write("b/1/model.onnx", testing::add_mul_model());
  EXPECT_TRUE(server->poll_once().ok());
  EXPECT_TRUE(server->model_ready("b", "").value());
  // New version: the latest policy moves to it, the old one unloads.
  repo.write("a/2/model.onnx", testing::add_mul_model());
  EXPECT_TRUE(server->poll_once().ok());
  auto md = server->model_metadata("a", "");
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(md->versions, (std::vector<std::string>{"2"}));
  // Changed files that do not load: version 2 keeps serving, the reason shows.
  repo.write("a/2/model.onnx", "broken now");
  EXPECT_FALSE(server->poll_once().ok());
  EXPECT_TRUE(server->infer(request("a", {1, 2, 3}, 1)).ok());
  bool reported = false;
  for (auto& e : server->repository_index(false))
    if (e.name == "a" && e.version == "2")
      reported = e.state == "READY" && e.reason.find("reload failed") != std::string::npos;
  EXPECT_TRUE(reported);
  // Removed model.
  std::filesystem::remove_all(repo.path() / "b");
  EXPECT_TRUE(server->poll_once().ok());
  EXPECT_FALSE(server->model_ready("b", "").value());
  EXPECT_EQ(server->infer(request("b", {1, 2, 3}, 1)).status().code(), StatusCode::kUnavailable);
}

TEST(ServerExplicit, LoadAndUnloadOnRequest) {
  TempDir repo;
  repo.write("a/1/model.onnx", testing::add_mul_model());
  repo.write("b/1/model.onnx", testing::add_mul_model());
  auto server = make_test_server(repo, ModelControlMode::kExplicit, {"a"});
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(server->ready());
  EXPECT_EQ(server->infer(request("b", {1, 2, 3}, 1)).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(server->load_model("b").ok());
  EXPECT_TRUE(server->infer(request("b", {1, 2, 3}, 1)).ok());
  ASSERT_TRUE(server->unload_model("b").ok());
  EXPECT_EQ(server->infer(request("b", {1, 2, 3}, 1)).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(server->load_model("missing").code(), StatusCode::kNotFound);
  auto none = make_test_server(repo);
  EXPECT_EQ(none->load_model("a").code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace osprey::server
