// Starts a GrpcServer on a free localhost port in front of a FakeServer and gives tests a
// stub on a real channel to it.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "fake_server.h"
#include "frontend/grpc/grpc_server.h"
#include "osprey_server/grpc_service.grpc.pb.h"
#include "osprey_server/health.grpc.pb.h"

namespace osprey::server::testing {

class GrpcTestEnv : public ::testing::Test {
 protected:
  void SetUp() override { start(ServerLimits{}); }

  void start(const ServerLimits& limits) {
    stub_.reset();
    grpc_.reset();
    fake_ = std::make_unique<FakeServer>(limits);
    grpc_frontend::GrpcServerOptions options;
    options.address = "127.0.0.1:0";
    options.stream_window = 4;
    auto started = grpc_frontend::GrpcServer::start(fake_.get(), options);
    ASSERT_TRUE(started.ok()) << started.status().to_string();
    grpc_ = std::move(started).value();
    ASSERT_GT(grpc_->port(), 0);
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    channel_ = grpc::CreateCustomChannel(address(), grpc::InsecureChannelCredentials(), args);
    stub_ = inference::GRPCInferenceService::NewStub(channel_);
    health_ = grpc::health::v1::Health::NewStub(channel_);
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(grpc_->port()); }

  // A context with a deadline, so that a hang fails the test instead of blocking it.
  static std::unique_ptr<grpc::ClientContext> ctx(int seconds = 10) {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
    return c;
  }

  std::unique_ptr<FakeServer> fake_;
  std::unique_ptr<grpc_frontend::GrpcServer> grpc_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

// An FP32 echo request with raw contents.
inline inference::ModelInferRequest echo_request(const std::string& id, std::vector<float> values) {
  inference::ModelInferRequest m;
  m.set_model_name("echo");
  m.set_id(id);
  auto* in = m.add_inputs();
  in->set_name("INPUT0");
  in->set_datatype("FP32");
  in->add_shape(1);
  in->add_shape(static_cast<int64_t>(values.size()));
  m.add_raw_input_contents(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return m;
}

}  // namespace osprey::server::testing
