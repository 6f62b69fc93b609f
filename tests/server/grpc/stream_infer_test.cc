// ModelStreamInfer through a real channel: order, errors in the middle, the in-flight window.
#include <gmock/gmock.h>

#include "grpc_test_env.h"

namespace osprey::server::testing {
namespace {

using ::testing::HasSubstr;
using Stream =
    grpc::ClientReaderWriter<inference::ModelInferRequest, inference::ModelStreamInferResponse>;

class GrpcStreamTest : public GrpcTestEnv {};

TEST_F(GrpcStreamTest, AnswersInOrderWithErrorsInTheMiddle) {
  auto c = ctx();
  std::unique_ptr<Stream> stream = stub_->ModelStreamInfer(c.get());
  inference::ModelInferRequest bad = echo_request("b", {1});
  bad.mutable_inputs(0)->add_shape(-3);
  inference::ModelInferRequest failing = echo_request("d", {1});
  failing.set_model_name("fail");
  ASSERT_TRUE(stream->Write(echo_request("a", {1, 2})));
  ASSERT_TRUE(stream->Write(bad));
  ASSERT_TRUE(stream->Write(echo_request("c", {3})));
  ASSERT_TRUE(stream->Write(failing));
  ASSERT_TRUE(stream->Write(echo_request("e", {5})));
  ASSERT_TRUE(stream->WritesDone());

  std::vector<inference::ModelStreamInferResponse> got;
  inference::ModelStreamInferResponse r;
  while (stream->Read(&r)) got.push_back(r);
  grpc::Status s = stream->Finish();
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].error_message(), "");
  EXPECT_EQ(got[0].infer_response().id(), "a");
  EXPECT_EQ(got[0].infer_response().raw_output_contents(0),
            echo_request("a", {1, 2}).raw_input_contents(0));
  EXPECT_THAT(got[1].error_message(), HasSubstr("input 'INPUT0': negative dimension -3"));
  EXPECT_EQ(got[1].infer_response().id(), "b");
  EXPECT_EQ(got[2].error_message(), "");
  EXPECT_EQ(got[2].infer_response().id(), "c");
  EXPECT_EQ(got[3].error_message(), "backend exploded");
  EXPECT_EQ(got[3].infer_response().id(), "d");
  EXPECT_EQ(got[4].infer_response().id(), "e");
}

TEST_F(GrpcStreamTest, LaterRequestsFinishingFirstStillAnswerInOrder) {
  // Delays make the server complete requests in reverse order; more requests than the window.
  auto c = ctx();
  std::unique_ptr<Stream> stream = stub_->ModelStreamInfer(c.get());
  const int n = 10;
  for (int i = 0; i < n; ++i) {
    inference::ModelInferRequest req = echo_request(std::to_string(i), {static_cast<float>(i)});
    (*req.mutable_parameters())["delay_ms"].set_int64_param((n - i) * 5);
    ASSERT_TRUE(stream->Write(req));
  }
  ASSERT_TRUE(stream->WritesDone());
  inference::ModelStreamInferResponse r;
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(stream->Read(&r)) << "response " << i;
    EXPECT_EQ(r.error_message(), "");
    EXPECT_EQ(r.infer_response().id(), std::to_string(i));
    const float v = static_cast<float>(i);
    EXPECT_EQ(r.infer_response().raw_output_contents(0),
              std::string(reinterpret_cast<const char*>(&v), 4));
  }
  EXPECT_FALSE(stream->Read(&r));
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(GrpcStreamTest, InterleavedWriteAndRead) {
  auto c = ctx();
  std::unique_ptr<Stream> stream = stub_->ModelStreamInfer(c.get());
  inference::ModelStreamInferResponse r;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(stream->Write(echo_request("x" + std::to_string(i), {1})));
    ASSERT_TRUE(stream->Read(&r));
    EXPECT_EQ(r.infer_response().id(), "x" + std::to_string(i));
  }
  ASSERT_TRUE(stream->WritesDone());
  EXPECT_FALSE(stream->Read(&r));
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(GrpcStreamTest, ClientCancelDoesNotHangShutdown) {
  {
    auto c = ctx();
    std::unique_ptr<Stream> stream = stub_->ModelStreamInfer(c.get());
    inference::ModelInferRequest slow = echo_request("s", {1});
    (*slow.mutable_parameters())["delay_ms"].set_int64_param(100);
    ASSERT_TRUE(stream->Write(slow));
    c->TryCancel();
    inference::ModelStreamInferResponse r;
    while (stream->Read(&r)) {
    }
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  grpc_->shutdown(std::chrono::seconds(5));  // returns once the cancelled stream is done
  SUCCEED();
}

}  // namespace
}  // namespace osprey::server::testing
