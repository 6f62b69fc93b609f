// Every unary RPC of the gRPC front end through a real localhost channel.
#include <gmock/gmock.h>
#include <grpcpp/generic/generic_stub.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "grpc_test_env.h"

namespace osprey::server::testing {
namespace {

using ::testing::HasSubstr;
using HealthResponse = grpc::health::v1::HealthCheckResponse;

class GrpcServerTest : public GrpcTestEnv {};

TEST_F(GrpcServerTest, LiveAndReady) {
  inference::ServerLiveResponse live;
  ASSERT_TRUE(stub_->ServerLive(ctx().get(), {}, &live).ok());
  EXPECT_TRUE(live.live());
  inference::ServerReadyResponse ready;
  ASSERT_TRUE(stub_->ServerReady(ctx().get(), {}, &ready).ok());
  EXPECT_TRUE(ready.ready());
  fake_->is_ready = false;
  ASSERT_TRUE(stub_->ServerReady(ctx().get(), {}, &ready).ok());
  EXPECT_FALSE(ready.ready());
}

TEST_F(GrpcServerTest, ModelReady) {
  inference::ModelReadyRequest req;
  inference::ModelReadyResponse resp;
  req.set_name("echo");
  ASSERT_TRUE(stub_->ModelReady(ctx().get(), req, &resp).ok());
  EXPECT_TRUE(resp.ready());
  req.set_name("loading");
  ASSERT_TRUE(stub_->ModelReady(ctx().get(), req, &resp).ok());
  EXPECT_FALSE(resp.ready());
  req.set_name("nope");
  grpc::Status s = stub_->ModelReady(ctx().get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("unknown model 'nope'"));
}

TEST_F(GrpcServerTest, ServerAndModelMetadata) {
  inference::ServerMetadataResponse sm;
  ASSERT_TRUE(stub_->ServerMetadata(ctx().get(), {}, &sm).ok());
  EXPECT_EQ(sm.name(), "osprey");
  EXPECT_EQ(sm.version(), "0.1.0");
  EXPECT_EQ(sm.extensions_size(), 3);

  inference::ModelMetadataRequest req;
  req.set_name("echo");
  inference::ModelMetadataResponse md;
  ASSERT_TRUE(stub_->ModelMetadata(ctx().get(), req, &md).ok());
  EXPECT_EQ(md.name(), "echo");
  EXPECT_EQ(md.platform(), "onnxruntime_onnx");
  ASSERT_EQ(md.inputs_size(), 1);
  EXPECT_EQ(md.inputs(0).name(), "INPUT0");
  EXPECT_EQ(md.inputs(0).shape(0), -1);
  ASSERT_EQ(md.outputs_size(), 1);

  req.set_version("7");
  grpc::Status s = stub_->ModelMetadata(ctx().get(), req, &md);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("no version '7'"));
}

TEST_F(GrpcServerTest, InferWithRawContents) {
  inference::ModelInferRequest req = echo_request("id-1", {1.5f, -2, 3, 4});
  auto* out = req.add_outputs();
  out->set_name("echo_INPUT0");
  inference::ModelInferResponse resp;
  grpc::Status s = stub_->ModelInfer(ctx().get(), req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.model_name(), "echo");
  EXPECT_EQ(resp.model_version(), "1");
  EXPECT_EQ(resp.id(), "id-1");
  EXPECT_EQ(resp.parameters().at("echoed_inputs").int64_param(), 1);
  ASSERT_EQ(resp.outputs_size(), 1);
  EXPECT_EQ(resp.outputs(0).name(), "echo_INPUT0");
  EXPECT_EQ(resp.outputs(0).datatype(), "FP32");
  ASSERT_EQ(resp.outputs(0).shape_size(), 2);
  EXPECT_EQ(resp.outputs(0).shape(1), 4);
  ASSERT_EQ(resp.raw_output_contents_size(), 1);
  EXPECT_EQ(resp.raw_output_contents(0), req.raw_input_contents(0));
}

TEST_F(GrpcServerTest, InferWithTypedContents) {
  inference::ModelInferRequest req;
  req.set_model_name("echo");
  auto* a = req.add_inputs();
  a->set_name("ints");
  a->set_datatype("INT32");
  a->add_shape(3);
  for (int v : {7, -8, 9}) a->mutable_contents()->add_int_contents(v);
  auto* b = req.add_inputs();
  b->set_name("words");
  b->set_datatype("BYTES");
  b->add_shape(2);
  b->mutable_contents()->add_bytes_contents("hello");
  b->mutable_contents()->add_bytes_contents("");
  inference::ModelInferResponse resp;
  grpc::Status s = stub_->ModelInfer(ctx().get(), req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.raw_output_contents_size(), 2);
  const int32_t want[] = {7, -8, 9};
  EXPECT_EQ(resp.raw_output_contents(0),
            std::string(reinterpret_cast<const char*>(want), sizeof(want)));
  EXPECT_EQ(resp.raw_output_contents(1), std::string("\x05\0\0\0hello\0\0\0\0", 13));
  EXPECT_EQ(resp.outputs(1).name(), "echo_words");
  EXPECT_EQ(resp.outputs(1).datatype(), "BYTES");
}

TEST_F(GrpcServerTest, InferErrorsMapToStatusCodes) {
  inference::ModelInferResponse resp;
  inference::ModelInferRequest bad = echo_request("x", {1, 2});
  bad.mutable_inputs(0)->set_datatype("FLOAT");
  grpc::Status s = stub_->ModelInfer(ctx().get(), bad, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("input 'INPUT0': unknown datatype 'FLOAT'"));

  inference::ModelInferRequest short_raw = echo_request("x", {1, 2});
  short_raw.mutable_raw_input_contents(0)->resize(5);
  s = stub_->ModelInfer(ctx().get(), short_raw, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("raw contents hold 5 bytes"));

  inference::ModelInferRequest unknown = echo_request("x", {1});
  unknown.set_model_name("ghost");
  s = stub_->ModelInfer(ctx().get(), unknown, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("unknown model 'ghost'"));

  inference::ModelInferRequest fail = echo_request("x", {1});
  fail.set_model_name("fail");
  s = stub_->ModelInfer(ctx().get(), fail, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(s.error_message(), "backend exploded");

  inference::ModelInferRequest busy = echo_request("x", {1});
  busy.set_model_name("busy");
  s = stub_->ModelInfer(ctx().get(), busy, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(s.error_message(), HasSubstr("queue full"));
}

TEST_F(GrpcServerTest, LimitsAreEnforced) {
  ServerLimits limits;
  limits.max_request_bytes = 64 << 10;
  limits.max_tensor_elements = 1000;
  start(limits);
  inference::ModelInferResponse resp;
  // Over the message limit: refused by gRPC before it reaches the server.
  grpc::Status s =
      stub_->ModelInfer(ctx().get(), echo_request("x", std::vector<float>(20000)), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  // Over the element limit: refused by the codec with the limit's name.
  inference::ModelInferRequest big = echo_request("x", {1});
  big.mutable_inputs(0)->set_shape(1, 5000);
  s = stub_->ModelInfer(ctx().get(), big, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("max_tensor_elements"));
  EXPECT_EQ(fake_->infer_calls, 0);
  // Under both: served.
  s = stub_->ModelInfer(ctx().get(), echo_request("x", std::vector<float>(1000)), &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST_F(GrpcServerTest, ConcurrentInfers) {
  std::vector<std::thread> clients;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const float v = static_cast<float>(t * 100 + i);
        inference::ModelInferRequest req = echo_request(std::to_string(v), {v, v + 1});
        inference::ModelInferResponse resp;
        grpc::Status s = stub_->ModelInfer(ctx().get(), req, &resp);
        if (s.ok() && resp.id() == req.id() &&
            resp.raw_output_contents(0) == req.raw_input_contents(0))
          ++good;
      }
    });
  }
  for (auto& c : clients) c.join();
  EXPECT_EQ(good, 100);
}

TEST_F(GrpcServerTest, HealthCheck) {
  grpc::health::v1::HealthCheckRequest req;
  HealthResponse resp;
  ASSERT_TRUE(health_->Check(ctx().get(), req, &resp).ok());
  EXPECT_EQ(resp.status(), HealthResponse::SERVING);
  req.set_service("inference.GRPCInferenceService");
  ASSERT_TRUE(health_->Check(ctx().get(), req, &resp).ok());
  EXPECT_EQ(resp.status(), HealthResponse::SERVING);
  fake_->is_ready = false;
  ASSERT_TRUE(health_->Check(ctx().get(), req, &resp).ok());
  EXPECT_EQ(resp.status(), HealthResponse::NOT_SERVING);
  req.set_service("other.Service");
  grpc::Status s = health_->Check(ctx().get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("unknown service 'other.Service'"));
}

TEST_F(GrpcServerTest, ModelStatistics) {
  inference::ModelStatisticsRequest req;
  inference::ModelStatisticsResponse resp;
  ASSERT_TRUE(stub_->ModelStatistics(ctx().get(), req, &resp).ok());
  ASSERT_EQ(resp.model_stats_size(), 1);
  const auto& m = resp.model_stats(0);
  EXPECT_EQ(m.name(), "echo");
  EXPECT_EQ(m.last_inference(), 1700000000000u);
  EXPECT_EQ(m.inference_count(), 12u);
  EXPECT_EQ(m.execution_count(), 3u);
  EXPECT_EQ(m.inference_stats().success().ns(), 3000u);
  EXPECT_EQ(m.inference_stats().fail().count(), 1u);
  ASSERT_EQ(m.batch_stats_size(), 1);
  EXPECT_EQ(m.batch_stats(0).batch_size(), 4u);
  req.set_name("ghost");
  EXPECT_EQ(stub_->ModelStatistics(ctx().get(), req, &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(GrpcServerTest, RepositoryIndex) {
  inference::RepositoryIndexRequest req;
  inference::RepositoryIndexResponse resp;
  ASSERT_TRUE(stub_->RepositoryIndex(ctx().get(), req, &resp).ok());
  ASSERT_EQ(resp.models_size(), 2);
  EXPECT_EQ(resp.models(1).name(), "broken");
  EXPECT_EQ(resp.models(1).state(), "UNAVAILABLE");
  EXPECT_EQ(resp.models(1).reason(), "load failed: bad model");
  req.set_ready(true);
  resp.Clear();
  ASSERT_TRUE(stub_->RepositoryIndex(ctx().get(), req, &resp).ok());
  ASSERT_EQ(resp.models_size(), 1);
  EXPECT_EQ(resp.models(0).state(), "READY");
  req.set_repository_name("elsewhere");
  EXPECT_EQ(stub_->RepositoryIndex(ctx().get(), req, &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(GrpcServerTest, RepositoryLoadAndUnload) {
  inference::RepositoryModelLoadRequest load;
  inference::RepositoryModelLoadResponse load_resp;
  load.set_model_name("echo");
  ASSERT_TRUE(stub_->RepositoryModelLoad(ctx().get(), load, &load_resp).ok());
  EXPECT_EQ(fake_->loaded(), std::vector<std::string>{"echo"});
  load.set_model_name("missing");
  grpc::Status s = stub_->RepositoryModelLoad(ctx().get(), load, &load_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("no model 'missing'"));
  load.set_model_name("locked");
  s = stub_->RepositoryModelLoad(ctx().get(), load, &load_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("not explicit"));
  load.set_model_name("");
  EXPECT_EQ(stub_->RepositoryModelLoad(ctx().get(), load, &load_resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  load.set_model_name("echo");
  // Load parameters reach the server: the config override as a string, files as bytes.
  (*load.mutable_parameters())["config"].set_string_param("{\"max_batch_size\": 4}");
  (*load.mutable_parameters())["file:1/model.onnx"].set_bytes_param(std::string("on\0nx", 5));
  ASSERT_TRUE(stub_->RepositoryModelLoad(ctx().get(), load, &load_resp).ok());
  ModelLoadOptions seen = fake_->last_load_options();
  EXPECT_EQ(seen.config.value_or(""), "{\"max_batch_size\": 4}");
  ASSERT_EQ(seen.files.count("1/model.onnx"), 1u);
  EXPECT_EQ(seen.files.at("1/model.onnx"), std::string("on\0nx", 5));
  // An unknown parameter key is refused before the server sees the load, naming the key.
  (*load.mutable_parameters())["colour"].set_string_param("blue");
  s = stub_->RepositoryModelLoad(ctx().get(), load, &load_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("colour"));

  inference::RepositoryModelUnloadRequest unload;
  inference::RepositoryModelUnloadResponse unload_resp;
  unload.set_model_name("fail");
  ASSERT_TRUE(stub_->RepositoryModelUnload(ctx().get(), unload, &unload_resp).ok());
  EXPECT_EQ(fake_->unloaded(), std::vector<std::string>{"fail"});
  unload.set_model_name("ghost");
  EXPECT_EQ(stub_->RepositoryModelUnload(ctx().get(), unload, &unload_resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(GrpcServerTest, ModelConfig) {
  inference::ModelConfigRequest req;
  inference::ModelConfigResponse resp;
  req.set_name("echo");
  ASSERT_TRUE(stub_->ModelConfig(ctx().get(), req, &resp).ok());
  EXPECT_EQ(resp.config().name(), "echo");
  EXPECT_EQ(resp.config().platform(), "onnxruntime_onnx");
  EXPECT_EQ(resp.config().max_batch_size(), 8);
  req.set_name("ghost");
  grpc::Status s = stub_->ModelConfig(ctx().get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("unknown model 'ghost'"));
}

TEST_F(GrpcServerTest, LeftOutRpcsAreUnimplemented) {
  grpc::GenericStub generic(channel_);
  grpc::ClientContext c;
  c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Slice empty_message("");  // the serialized form of an empty request message
  grpc::ByteBuffer request(&empty_message, 1);
  grpc::ByteBuffer response;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status status;
  generic.UnaryCall(&c, "/inference.GRPCInferenceService/SystemSharedMemoryStatus",
                    grpc::StubOptions(), &request, &response, [&](grpc::Status s) {
                      std::lock_guard<std::mutex> lock(mu);
                      status = s;
                      done = true;
                      cv.notify_one();
                    });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

TEST_F(GrpcServerTest, BindFailureIsAClearError) {
  grpc_frontend::GrpcServerOptions options;
  options.address = address();  // already taken by this fixture's server
  auto second = grpc_frontend::GrpcServer::start(fake_.get(), options);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr("port is in use"));
  options.address = "localhost";
  auto bad = grpc_frontend::GrpcServer::start(fake_.get(), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  options.address = "localhost:99999";
  bad = grpc_frontend::GrpcServer::start(fake_.get(), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("0..65535"));
}

TEST_F(GrpcServerTest, ShutdownFinishesCallsInProgress) {
  inference::ModelInferRequest slow = echo_request("slow", {1, 2});
  (*slow.mutable_parameters())["delay_ms"].set_int64_param(300);
  grpc::Status slow_status;
  inference::ModelInferResponse slow_resp;
  std::thread client([&] { slow_status = stub_->ModelInfer(ctx().get(), slow, &slow_resp); });
  while (fake_->infer_calls == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  grpc_->shutdown(std::chrono::seconds(5));
  client.join();
  EXPECT_TRUE(slow_status.ok()) << slow_status.error_message();
  EXPECT_EQ(slow_resp.id(), "slow");
  inference::ServerLiveResponse live;
  grpc::Status after = stub_->ServerLive(ctx(2).get(), {}, &live);
  EXPECT_FALSE(after.ok());
  EXPECT_EQ(after.error_code(), grpc::StatusCode::UNAVAILABLE);
}

}  // namespace
}  // namespace osprey::server::testing
