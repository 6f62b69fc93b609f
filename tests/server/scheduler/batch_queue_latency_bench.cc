// Hand-off latency of BatchQueue at concurrency 1 (a tool, not a test): one thread submits a
// request to a model that does not batch, waits for its ExecuteFn to signal back (as a front end
// waits for its completion callback), and submits the next. Reports, per request, the time from
// submit() to the ExecuteFn starting (the server's "queue" time) and the whole round trip.
// Usage: osprey_batch_queue_bench [requests=20000] [instances=1]
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "scheduler/batch_queue.h"

namespace {

using Steady = std::chrono::steady_clock;
namespace sch = osprey::server::scheduler;

void report(const char* what, std::vector<double> us) {
  std::sort(us.begin(), us.end());
  auto pct = [&](double p) {
    return us[static_cast<size_t>(p * static_cast<double>(us.size() - 1))];
  };
  std::printf("%-10s n=%zu  p50 %.1f us  p90 %.1f  p99 %.1f\n", what, us.size(), pct(0.5), pct(0.9),
              pct(0.99));
}

}  // namespace

int main(int argc, char** argv) {
  const int requests = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int instances = argc > 2 ? std::atoi(argv[2]) : 1;
  if (requests < 1 || instances < 1) {
    std::fprintf(stderr, "usage: %s [requests >= 1] [instances >= 1]\n", argv[0]);
    return 2;
  }
  sch::SystemClock clock;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Steady::time_point started;
  auto execute = [&](int, std::vector<uint64_t>) {
    const auto now = Steady::now();
    std::lock_guard<std::mutex> lock(mu);
    started = now;
    done = true;
    cv.notify_one();
  };
  sch::BatchQueue queue(sch::BatcherConfig{}, instances, &clock, execute,
                        [](uint64_t, osprey::Status) {});
  std::vector<double> queue_us, round_us;
  const int warmup = requests / 10;
  for (int i = 0; i < warmup + requests; ++i) {
    sch::PendingItem item;
    item.id = static_cast<uint64_t>(i) + 1;
    const auto t0 = Steady::now();
    if (!queue.submit(item).ok()) {
      std::fprintf(stderr, "submit failed\n");
      return 1;
    }
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
    done = false;
    const auto t1 = Steady::now();
    if (i < warmup) continue;
    queue_us.push_back(std::chrono::duration<double, std::micro>(started - t0).count());
    round_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  report("queue", queue_us);
  report("round trip", round_us);
  std::printf("scheduler passes %llu, direct batches %llu\n",
              static_cast<unsigned long long>(queue.scheduler_passes()),
              static_cast<unsigned long long>(queue.direct_batches()));
  return 0;
}
