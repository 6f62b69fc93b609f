// ServingVersion with dynamic_batching.preserve_ordering over a fake LoadedModel: the response
// callbacks the front ends get are called in arrival order, and without the option as batches
// finish.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "core/serving_version.h"

namespace osprey::server {
namespace {

using namespace std::chrono_literals;

// Two instances; a request whose id is in `held` blocks its batch until open() is called.
class GatedModel : public LoadedModel {
 public:
  explicit GatedModel(bool preserve_ordering) {
    config_.set_name("m");
    config_.set_max_batch_size(1);
    config_.mutable_dynamic_batching()->set_preserve_ordering(preserve_ordering);
  }
  const inference::ModelConfig& config() const override { return config_; }
  int instance_count() const override { return 2; }
  std::vector<Result<InferResponse>> execute(int, const std::vector<const InferRequest*>& batch,
                                             BatchTiming*) override {
    std::vector<Result<InferResponse>> out;
    for (const InferRequest* r : batch) {
      std::unique_lock<std::mutex> lock(mu_);
      started_.insert(r->id);
      cv_.notify_all();
      cv_.wait(lock, [&] { return held_.count(r->id) == 0; });
      if (r->id == "bad") {
        out.emplace_back(internal_error("no good"));
      } else {
        out.emplace_back(InferResponse{});
      }
      finished_.insert(r->id);
      cv_.notify_all();
    }
    return out;
  }
  void hold(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    held_.insert(id);
  }
  void open(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    held_.erase(id);
    cv_.notify_all();
  }
  bool wait_started(const std::string& id) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return started_.count(id) != 0; });
  }
  bool wait_finished(const std::string& id) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return finished_.count(id) != 0; });
  }

 private:
  inference::ModelConfig config_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<std::string> held_, started_, finished_;
};

struct Answers {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> order;  // request id, "!" prefixed for an error
  Server::InferCallback callback(const std::string& id) {
    return [this, id](Result<InferResponse> r) {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(r.ok() ? r->id : "!" + id);
      cv.notify_all();
    };
  }
  std::vector<std::string> wait(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, 10s, [&] { return order.size() >= n; });
    return order;
  }
  std::vector<std::string> now() {
    std::lock_guard<std::mutex> lock(mu);
    return order;
  }
};

// "slow" runs first on instance 0 and is held; "bad" (a backend error) and "fast" run on instance
// 1 meanwhile. Returns what was answered before "slow" was let go, and everything.
std::pair<std::vector<std::string>, std::vector<std::string>> run(bool preserve_ordering) {
  scheduler::SystemClock clock;
  auto model = std::make_unique<GatedModel>(preserve_ordering);
  GatedModel* m = model.get();
  m->hold("slow");
  ServingVersion version("m", 1, std::move(model), 16, &clock, nullptr);
  Answers answers;
  auto submit = [&](const std::string& id) {
    InferRequest r;
    r.model_name = "m";
    r.id = id;
    RequestShape shape;
    shape.shape_key = "k";
    EXPECT_TRUE(version.submit(std::move(r), shape, answers.callback(id), steady_now_ns()).ok());
  };
  submit("slow");
  EXPECT_TRUE(m->wait_started("slow"));
  submit("bad");
  EXPECT_TRUE(m->wait_finished("bad"));
  submit("fast");
  EXPECT_TRUE(m->wait_finished("fast"));
  if (!preserve_ordering) answers.wait(2);
  std::this_thread::sleep_for(20ms);  // a held answer that leaked would show up now
  const auto before = answers.now();
  m->open("slow");
  const auto all = answers.wait(3);
  version.drain();
  return {before, all};
}

TEST(ServingVersionOrder, CallbacksFollowArrivalOrder) {
  const auto [before, all] = run(/*preserve_ordering=*/true);
  EXPECT_TRUE(before.empty());
  EXPECT_EQ(all, std::vector<std::string>({"slow", "!bad", "fast"}));
}

TEST(ServingVersionOrder, WithoutTheOptionCallbacksFollowCompletion) {
  const auto [before, all] = run(/*preserve_ordering=*/false);
  EXPECT_EQ(before, std::vector<std::string>({"!bad", "fast"}));
  EXPECT_EQ(all, std::vector<std::string>({"!bad", "fast", "slow"}));
}

}  // namespace
}  // namespace osprey::server
