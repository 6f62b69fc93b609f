// grpc.health.v1.Health/Watch through a real localhost channel: the first status, changes
// (told by the server's health notification; nothing polls), cancellation and shutdown with
// streams open.
#include <gmock/gmock.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

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
  fake_->is_ready = false;  // no notification needed: a new stream reads the status
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
  fake_->notify_health_changed();
  EXPECT_EQ(next(w), HealthResponse::NOT_SERVING);
  fake_->is_ready = true;
  fake_->notify_health_changed();
  EXPECT_EQ(next(w), HealthResponse::SERVING);
  // Check agrees with what Watch said.
  HealthResponse resp;
  ASSERT_TRUE(health_->Check(ctx().get(), {}, &resp).ok());
  EXPECT_EQ(resp.status(), HealthResponse::SERVING);
}

TEST_F(HealthWatchTest, ANotificationIsSentAtOnceAndOnlyChangesAreSent) {
  Watch w = watch("", 30);
  Watch other = watch("other.Service", 30);
  ASSERT_EQ(next(w), HealthResponse::SERVING);
  ASSERT_EQ(next(other), HealthResponse::SERVICE_UNKNOWN);
  // Without a change a notification sends nothing: the next message is the change below.
  fake_->notify_health_changed();
  fake_->notify_health_changed();
  fake_->is_ready = false;
  const auto start = std::chrono::steady_clock::now();
  fake_->notify_health_changed();
  // Causality, not speed: the stream has no timer, so only the notification can send this
  // (a lost one would leave Read waiting out the 30 s deadline).
  ASSERT_EQ(next(w), HealthResponse::NOT_SERVING);
  const auto latency = std::chrono::steady_clock::now() - start;
  std::printf("notification to client: %.2f ms\n",
              std::chrono::duration<double, std::milli>(latency).count());
  EXPECT_LT(latency, 10s);
  // Many notifications from several threads: the stream ends on the final status.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([this, t] {
      for (int i = 0; i < 50; ++i) {
        fake_->is_ready = (i + t) % 2 == 0;
        fake_->notify_health_changed();
      }
    });
  for (auto& t : threads) t.join();
  fake_->is_ready = true;
  fake_->notify_health_changed();
  HealthResponse::ServingStatus last = HealthResponse::UNKNOWN;
  while (last != HealthResponse::SERVING) {
    last = next(w);
    ASSERT_NE(last, HealthResponse::UNKNOWN) << "the stream never reached the final status";
  }
  // And then nothing more: the other service's stream saw no message at all.
  w.ctx->TryCancel();
  other.ctx->TryCancel();
  EXPECT_EQ(next(other), HealthResponse::UNKNOWN);
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
