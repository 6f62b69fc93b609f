// grpc.health.v1.Health/Watch through a real localhost channel: the first status, changes,
// cancellation and shutdown with streams open.
#include <gmock/gmock.h>

#include <chrono>
#include <memory>
#include <thread>

#include "grpc_test_env.h"

namespace osprey::server::testing {
namespace {

using ::testing::HasSubstr;
using HealthResponse = grpc::health::v1::HealthCheckResponse;
using Reader = grpc::ClientReader<HealthResponse>;
using namespace std::chrono_literals;

class HealthWatchTest : public GrpcTestEnv {
 protected:
  struct Watch {
    std::unique_ptr<grpc::ClientContext> ctx;
    std::unique_ptr<Reader> reader;
  };
  Watch watch(const std::string& service, int seconds = 10) {
    Watch w;
    w.ctx = ctx(seconds);
    grpc::health::v1::HealthCheckRequest req;
    req.set_service(service);
    w.reader = health_->Watch(w.ctx.get(), req);
    return w;
  }
  // The next status on the stream; UNKNOWN (0) if the stream ended instead.
  static HealthResponse::ServingStatus next(Watch& w) {
    HealthResponse resp;
    if (!w.reader->Read(&resp)) return HealthResponse::UNKNOWN;
    return resp.status();
  }
  bool wait_open_watches(int64_t n) {
    for (int i = 0; i < 500 && grpc_->open_health_watches() != n; ++i)
      std::this_thread::sleep_for(10ms);
    return grpc_->open_health_watches() == n;
  }
};

TEST_F(HealthWatchTest, FirstMessageIsTheCurrentStatus) {
  Watch server = watch("");
  EXPECT_EQ(next(server), HealthResponse::SERVING);
  Watch inference = watch("inference.GRPCInferenceService");
  EXPECT_EQ(next(inference), HealthResponse::SERVING);
  fake_->is_ready = false;
  Watch not_ready = watch("");
  EXPECT_EQ(next(not_ready), HealthResponse::NOT_SERVING);
  EXPECT_TRUE(wait_open_watches(3));
}

TEST_F(HealthWatchTest, UnknownServiceIsServiceUnknownAndTheStreamStaysOpen) {
  Watch w = watch("other.Service", 1);
  EXPECT_EQ(next(w), HealthResponse::SERVICE_UNKNOWN);
  // Nothing more comes, and the server does not end the stream: the client's deadline does.
  EXPECT_EQ(next(w), HealthResponse::UNKNOWN);
  EXPECT_EQ(w.reader->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
}

TEST_F(HealthWatchTest, ChangesAreSent) {
  Watch w = watch("");
  ASSERT_EQ(next(w), HealthResponse::SERVING);
  fake_->is_ready = false;
  EXPECT_EQ(next(w), HealthResponse::NOT_SERVING);
  fake_->is_ready = true;
  EXPECT_EQ(next(w), HealthResponse::SERVING);
  // Check agrees with what Watch said.
  HealthResponse resp;
  ASSERT_TRUE(health_->Check(ctx().get(), {}, &resp).ok());
  EXPECT_EQ(resp.status(), HealthResponse::SERVING);
}

TEST_F(HealthWatchTest, CancelEndsTheStream) {
  Watch w = watch("");
  ASSERT_EQ(next(w), HealthResponse::SERVING);
  ASSERT_TRUE(wait_open_watches(1));
  w.ctx->TryCancel();
  EXPECT_EQ(next(w), HealthResponse::UNKNOWN);
  EXPECT_EQ(w.reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(wait_open_watches(0)) << "the server kept the cancelled stream";
  Watch again = watch("");
  EXPECT_EQ(next(again), HealthResponse::SERVING) << "Watch still works after a cancel";
}

TEST_F(HealthWatchTest, ShutdownFinishesOpenStreams) {
  Watch a = watch("", 60);
  Watch b = watch("other.Service", 60);
  ASSERT_EQ(next(a), HealthResponse::SERVING);
  ASSERT_EQ(next(b), HealthResponse::SERVICE_UNKNOWN);
  const auto start = std::chrono::steady_clock::now();
  grpc_->shutdown(30s);
  // A hang check, not a speed check: without ending the streams, shutdown waits out the 30 s.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  for (Watch* w : {&a, &b}) {
    EXPECT_EQ(next(*w), HealthResponse::NOT_SERVING);
    EXPECT_EQ(next(*w), HealthResponse::UNKNOWN);
    const grpc::Status s = w->reader->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_THAT(s.error_message(), HasSubstr("shutting down"));
  }
  EXPECT_EQ(grpc_->open_health_watches(), 0);
}

}  // namespace
}  // namespace osprey::server::testing
