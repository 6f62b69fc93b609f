#include "core/model_lifecycle.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>

namespace osprey::server {
namespace {

using namespace std::chrono_literals;

// A version that counts requests in flight; drain() waits for them.
class FakeVersion : public ServedVersion {
 public:
  explicit FakeVersion(std::string fingerprint) : fingerprint(std::move(fingerprint)) {}
  void drain() override {
    std::unique_lock<std::mutex> lock(mu);
    draining = true;
    cv.wait(lock, [&] { return in_flight == 0; });
    drained = true;
  }
  void begin() {
    std::lock_guard<std::mutex> lock(mu);
    ++in_flight;
  }
  void finish() {
    std::lock_guard<std::mutex> lock(mu);
    --in_flight;
    cv.notify_all();
  }
  std::string fingerprint;
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  bool draining = false;
  std::atomic<bool> drained{false};
};

// Loads succeed unless the fingerprint starts with "bad"; a fingerprint starting with "slow"
// blocks until release() is called. Each load moves the fake clock by 2 s.
class FakeLoader {
 public:
  explicit FakeLoader(scheduler::FakeClock* clock) : clock_(clock) {}
  Result<std::shared_ptr<ServedVersion>> operator()(const VersionSource& s) {
    clock_->advance_us(2'000'000);
    if (s.fingerprint.rfind("slow", 0) == 0) {
      std::unique_lock<std::mutex> lock(mu_);
      started_ = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return released_; });
    }
    if (s.fingerprint.rfind("bad", 0) == 0) return invalid_argument("cannot load ", s.fingerprint);
    auto v = std::make_shared<FakeVersion>(s.fingerprint);
    std::lock_guard<std::mutex> lock(mu_);
    loaded_.push_back(v);  // kept alive so tests may inspect a version after it is swapped out
    return std::shared_ptr<ServedVersion>(v);
  }
  void wait_started() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return started_; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  scheduler::FakeClock* clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false, released_ = false;
  std::vector<std::shared_ptr<FakeVersion>> loaded_;
};

ScannedModel scan(std::vector<std::pair<int64_t, std::string>> versions,
                  const std::string& policy = "latest") {
  ScannedModel m;
  m.name = "m";
  m.dir = "/repo/m";
  if (policy == "all") m.config.mutable_version_policy()->mutable_all();
  for (auto& [v, fp] : versions) {
    ScannedVersion sv;
    sv.version = v;
    sv.model_file = "/repo/m/" + std::to_string(v) + "/model.onnx";
    sv.fingerprint = fp;
    m.versions.push_back(sv);
  }
  return m;
}

struct ModelLifecycleTest : ::testing::Test {
  scheduler::FakeClock clock;
  FakeLoader loader{&clock};
  std::vector<double> load_seconds;
  ModelLifecycle lifecycle{[this](const VersionSource& s) { return loader(s); }, &clock,
                           [this](const std::string&, int64_t, double s, const Status&) {
                             load_seconds.push_back(s);
                           }};

  FakeVersion* serving(int64_t version = 0) {
    FakeVersion* out = nullptr;
    Status st = lifecycle.with_version("m", version, [&](ServedVersion& v, int64_t) {
      out = static_cast<FakeVersion*>(&v);
    });
    return st.ok() ? out : nullptr;
  }
  RepositoryEntry entry(const std::string& version) {
    for (auto& e : lifecycle.index(false))
      if (e.version == version) return e;
    return {};
  }
};

TEST_F(ModelLifecycleTest, LoadsLatestVersionInBackground) {
  Status st = lifecycle.apply(scan({{1, "a"}, {2, "b"}}), false).get();
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_NE(serving(), nullptr);
  EXPECT_EQ(serving()->fingerprint, "b");
  EXPECT_EQ(entry("2").state, "READY");
  EXPECT_EQ(lifecycle.with_version("m", 1, [](ServedVersion&, int64_t) {}).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(lifecycle.with_version("nope", 0, [](ServedVersion&, int64_t) {}).code(),
            StatusCode::kNotFound);
  ASSERT_EQ(load_seconds.size(), 1u);
  EXPECT_DOUBLE_EQ(load_seconds[0], 2.0);  // measured on the injected clock
}

TEST_F(ModelLifecycleTest, ReloadKeepsServingUntilNewVersionIsReady) {
  ASSERT_TRUE(lifecycle.apply(scan({{1, "a"}}), false).get().ok());
  FakeVersion* old = serving();
  ASSERT_NE(old, nullptr);
  auto pending = lifecycle.apply(scan({{1, "slow-b"}}), false);
  loader.wait_started();
  // While the new files load, the old version still takes requests and reports READY.
  EXPECT_EQ(serving(), old);
  EXPECT_EQ(entry("1").state, "READY");
  old->begin();  // a request in flight on the old version
  loader.release();
  // The swap happens, then drain waits for the in-flight request.
  for (int i = 0; i < 200 && serving() == old; ++i) std::this_thread::sleep_for(5ms);
  FakeVersion* fresh = serving();
  ASSERT_NE(fresh, old);
  EXPECT_EQ(fresh->fingerprint, "slow-b");
  EXPECT_EQ(pending.wait_for(50ms), std::future_status::timeout);  // still draining
  EXPECT_FALSE(old->drained);
  old->finish();
  EXPECT_TRUE(pending.get().ok());
  EXPECT_TRUE(old->drained);
}

TEST_F(ModelLifecycleTest, FailedReloadKeepsPreviousVersion) {
  ASSERT_TRUE(lifecycle.apply(scan({{1, "a"}}), false).get().ok());
  FakeVersion* old = serving();
  Status st = lifecycle.apply(scan({{1, "bad-b"}}), false).get();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot load bad-b"), std::string::npos) << st.message();
  EXPECT_EQ(serving(), old);
  EXPECT_FALSE(old->drained);
  auto e = entry("1");
  EXPECT_EQ(e.state, "READY");
  EXPECT_NE(e.reason.find("reload failed"), std::string::npos) << e.reason;
  EXPECT_NE(e.reason.find("cannot load bad-b"), std::string::npos) << e.reason;
  // The same broken files are not retried by a poll, but are by an explicit load.
  EXPECT_TRUE(lifecycle.apply(scan({{1, "bad-b"}}), false).get().ok());
  EXPECT_FALSE(lifecycle.apply(scan({{1, "bad-b"}}), true).get().ok());
}

TEST_F(ModelLifecycleTest, FailedFirstLoadIsUnavailableWithReason) {
  EXPECT_FALSE(lifecycle.apply(scan({{1, "bad-x"}}), false).get().ok());
  auto e = entry("1");
  EXPECT_EQ(e.state, "UNAVAILABLE");
  EXPECT_NE(e.reason.find("cannot load bad-x"), std::string::npos);
  EXPECT_EQ(lifecycle.with_version("m", 0, [](ServedVersion&, int64_t) {}).code(),
            StatusCode::kUnavailable);
}

TEST_F(ModelLifecycleTest, NewVersionReplacesOldUnderLatestPolicy) {
  ASSERT_TRUE(lifecycle.apply(scan({{1, "a"}}), false).get().ok());
  FakeVersion* v1 = serving();
  ASSERT_TRUE(lifecycle.apply(scan({{1, "a"}, {2, "b"}}), false).get().ok());
  EXPECT_EQ(serving()->fingerprint, "b");
  EXPECT_TRUE(v1->drained);
  EXPECT_EQ(entry("1").state, "UNAVAILABLE");
  EXPECT_EQ(entry("2").state, "READY");
  // Under "all" both serve.
  ASSERT_TRUE(lifecycle.apply(scan({{1, "a"}, {2, "b"}}, "all"), false).get().ok());
  EXPECT_NE(serving(1), nullptr);
  EXPECT_NE(serving(2), nullptr);
}

TEST_F(ModelLifecycleTest, BrokenNewerVersionLeavesTheOlderOneServing) {
  ASSERT_TRUE(lifecycle.apply(scan({{1, "a"}, {2, "b"}}), false).get().ok());
  FakeVersion* v2 = serving();
  ASSERT_EQ(v2->fingerprint, "b");
  // Version 3 is selected by "latest" but cannot load: version 2 keeps serving.
  EXPECT_FALSE(lifecycle.apply(scan({{1, "a"}, {2, "b"}, {3, "bad-c"}}), false).get().ok());
  EXPECT_EQ(serving(), v2);
  EXPECT_FALSE(v2->drained);
  EXPECT_EQ(entry("2").state, "READY");
  EXPECT_EQ(entry("3").state, "UNAVAILABLE");
  EXPECT_NE(entry("3").reason.find("cannot load bad-c"), std::string::npos) << entry("3").reason;
  // Once version 3 is fixed it replaces version 2.
  ASSERT_TRUE(lifecycle.apply(scan({{1, "a"}, {2, "b"}, {3, "c"}}), false).get().ok());
  EXPECT_EQ(serving()->fingerprint, "c");
  EXPECT_TRUE(v2->drained);
  EXPECT_EQ(entry("2").state, "UNAVAILABLE");
}

TEST_F(ModelLifecycleTest, UnloadDrainsInFlightRequests) {
  ASSERT_TRUE(lifecycle.apply(scan({{1, "a"}}), false).get().ok());
  FakeVersion* v = serving();
  v->begin();
  auto done = lifecycle.unload("m");
  for (int i = 0; i < 200 && !v->draining; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(entry("1").state, "UNLOADING");
  EXPECT_EQ(done.wait_for(50ms), std::future_status::timeout);
  v->finish();
  EXPECT_TRUE(done.get().ok());
  EXPECT_EQ(entry("1").state, "UNAVAILABLE");
  EXPECT_EQ(lifecycle.with_version("m", 0, [](ServedVersion&, int64_t) {}).code(),
            StatusCode::kUnavailable);
}

TEST_F(ModelLifecycleTest, ConfigErrorIsReportedAndKeepsServing) {
  ASSERT_TRUE(lifecycle.apply(scan({{1, "a"}}), false).get().ok());
  ScannedModel broken = scan({{1, "a2"}});
  broken.config_status = invalid_argument("config.pbtxt:1:1: bad");
  EXPECT_FALSE(lifecycle.apply(broken, false).get().ok());
  EXPECT_NE(serving(), nullptr);
  EXPECT_NE(entry("1").reason.find("config.pbtxt:1:1: bad"), std::string::npos) << entry("1").reason;
}

}  // namespace
}  // namespace osprey::server
