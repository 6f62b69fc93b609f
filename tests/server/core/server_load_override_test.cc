// Explicit loads with a config override, and the server's health notification, on a tiny real
// ONNX model in a temporary repository.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/osprey_backend.h"
#include "core/server_impl.h"
#include "osprey_server/model_config.pb.h"
#include "test_util.h"

namespace osprey::server {
namespace {

using testing::floats_to_bytes;
using testing::make_test_server;
using testing::TempDir;

InferRequest request(const std::string& model, int64_t rows) {
  return testing::add_mul_request(model, std::vector<float>(static_cast<size_t>(rows) * 3, 1.0f), rows);
}

ModelLoadOptions with_config(std::string json) {
  ModelLoadOptions o;
  o.config = std::move(json);
  return o;
}

inference::ModelConfig config_of(Server& s, const std::string& model) {
  inference::ModelConfig c;
  Status st = s.model_config(model, "", &c);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return c;
}

struct LoadOverrideTest : ::testing::Test {
  void SetUp() override {
    repo.write("m/config.pbtxt", "max_batch_size: 8\n");
    repo.write("m/1/model.onnx", testing::add_mul_model());
    server = make_test_server(repo, ModelControlMode::kExplicit, {"m"});
    ASSERT_NE(server, nullptr);
    ASSERT_EQ(config_of(*server, "m").max_batch_size(), 8);
  }
  TempDir repo;
  std::unique_ptr<ServerImpl> server;
};

TEST_F(LoadOverrideTest, TheOverrideServesUntilALoadWithoutIt) {
  Status st = server->load_model(
      "m", with_config(R"({"max_batch_size": 2, "dynamicBatching": {}, "parameters":
                           {"optimization_level": {"string_value": "1"}}})"));
  ASSERT_TRUE(st.ok()) << st.to_string();
  inference::ModelConfig c = config_of(*server, "m");
  EXPECT_EQ(c.max_batch_size(), 2);
  EXPECT_TRUE(c.has_dynamic_batching());
  EXPECT_EQ(c.parameters().at("optimization_level").string_value(), "1");
  ASSERT_EQ(c.input_size(), 1) << "the override is completed from the model";
  EXPECT_EQ(c.input(0).name(), "x");
  EXPECT_TRUE(server->infer(request("m", 2)).ok());
  // The override's max_batch_size is what the server enforces now.
  EXPECT_EQ(server->infer(request("m", 3)).status().code(), StatusCode::kInvalidArgument);
  // Loading without it goes back to config.pbtxt, which was never changed.
  ASSERT_TRUE(server->load_model("m").ok());
  c = config_of(*server, "m");
  EXPECT_EQ(c.max_batch_size(), 8);
  EXPECT_FALSE(c.has_dynamic_batching());
  EXPECT_TRUE(server->infer(request("m", 3)).ok());
}

TEST_F(LoadOverrideTest, ABadOverrideIsRefusedAndTheVersionKeepsServing) {
  Status st = server->load_model("m", with_config(R"({"max_batch_size": 2, "colour": 1})"));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("colour"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("model 'm'"), std::string::npos) << st.message();
  // Valid JSON that does not fit the model: found when the version loads.
  st = server->load_model(
      "m", with_config(R"({"input": [{"name": "x", "data_type": "TYPE_INT32", "dims": [3]}]})"));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
  EXPECT_NE(st.message().find("x"), std::string::npos) << st.message();
  EXPECT_TRUE(server->ready());
  EXPECT_EQ(config_of(*server, "m").max_batch_size(), 8);
  EXPECT_TRUE(server->infer(request("m", 3)).ok());
}

TEST(LoadOverride, OnlyInExplicitMode) {
  TempDir repo;
  repo.write("m/1/model.onnx", testing::add_mul_model());
  auto server = make_test_server(repo, ModelControlMode::kNone, {});
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->load_model("m", with_config("{}")).code(), StatusCode::kFailedPrecondition);
  auto explicit_server = make_test_server(repo, ModelControlMode::kExplicit, {});
  EXPECT_EQ(explicit_server->load_model("nope", with_config("{}")).code(), StatusCode::kNotFound);
  ASSERT_TRUE(explicit_server->load_model("m", with_config("{}")).ok());
  EXPECT_TRUE(explicit_server->model_ready("m", "").value());
}

// Records what ready() said at each notification.
struct HealthLog {
  explicit HealthLog(const Server& s)
      : server(s), subscription(s.subscribe_health([this] {
          std::lock_guard<std::mutex> lock(mu);
          seen.push_back(server.ready());
        })) {}
  std::vector<bool> take() {
    std::lock_guard<std::mutex> lock(mu);
    return std::exchange(seen, {});
  }
  const Server& server;
  std::mutex mu;
  std::vector<bool> seen;
  std::unique_ptr<HealthEvents::Subscription> subscription;
};

TEST(HealthNotification, UnloadLoadAndShutdownNotifyBeforeTheyReturn) {
  TempDir repo;
  repo.write("m/1/model.onnx", testing::add_mul_model());
  auto server = make_test_server(repo, ModelControlMode::kExplicit, {"m"});
  ASSERT_NE(server, nullptr);
  HealthLog log(*server);
  ASSERT_TRUE(server->unload_model("m").ok());
  std::vector<bool> seen = log.take();
  ASSERT_FALSE(seen.empty()) << "unload returned without a notification";
  EXPECT_FALSE(seen.back()) << "the last notification before unload returned saw it ready";
  ASSERT_TRUE(server->load_model("m").ok());
  seen = log.take();
  ASSERT_FALSE(seen.empty()) << "load returned without a notification";
  EXPECT_TRUE(seen.back());
  // A failed load changes nothing, but still notifies (harmless: listeners read the status).
  EXPECT_FALSE(server->load_model("m", with_config(R"({"max_batch_size": -1})")).ok());
  server->shutdown();
  seen = log.take();
  ASSERT_FALSE(seen.empty()) << "shutdown without a notification";
  EXPECT_FALSE(seen.back());
}

TEST(HealthNotification, ASubscriptionEndsItsListener) {
  TempDir repo;
  repo.write("m/1/model.onnx", testing::add_mul_model());
  auto server = make_test_server(repo, ModelControlMode::kExplicit, {"m"});
  ASSERT_NE(server, nullptr);
  std::atomic<int> calls{0};
  auto sub = server->subscribe_health([&] { ++calls; });
  ASSERT_TRUE(server->unload_model("m").ok());
  EXPECT_GT(calls.load(), 0);
  sub.reset();
  const int before = calls.load();
  ASSERT_TRUE(server->load_model("m").ok());
  EXPECT_EQ(calls.load(), before);
}

TEST(HealthEvents, DeliveriesAreSerializedAndUnsubscribeWaitsForARunningOne) {
  HealthEvents events;
  std::atomic<int> running{0}, max_running{0}, calls{0};
  auto sub = events.subscribe([&] {
    const int now = ++running;
    int prev = max_running.load();
    while (now > prev && !max_running.compare_exchange_weak(prev, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ++calls;
    --running;
  });
  EXPECT_EQ(events.listener_count(), 1u);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) events.notify();
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  sub.reset();  // while notifications run: returns only between two of them
  const int after_reset = calls.load();
  EXPECT_EQ(running.load(), 0);
  for (auto& t : threads) t.join();
  EXPECT_EQ(calls.load(), after_reset) << "the listener ran after its subscription ended";
  EXPECT_EQ(max_running.load(), 1);
  EXPECT_EQ(events.listener_count(), 0u);
}

}  // namespace
}  // namespace osprey::server
