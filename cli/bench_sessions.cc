#include "bench_sessions.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <mutex>
#include <thread>

#include "stats.h"

namespace osprey::cli {

Result<ConcurrentRuns> run_sessions_concurrently(const std::vector<const Session*>& sessions,
                                                 const std::vector<NamedTensor>& feeds, int warmup,
                                                 int iterations, double duration_s) {
  using Clock = std::chrono::steady_clock;
  const size_t n = sessions.size();
  std::vector<std::vector<double>> samples(n);
  std::mutex mu;
  Status first_error;
  std::atomic<bool> failed{false};
  Clock::time_point start;
  std::barrier sync(static_cast<std::ptrdiff_t>(n), [&]() noexcept { start = Clock::now(); });
  auto fail = [&](size_t i, const Status& s, const char* phase) {
    std::lock_guard<std::mutex> lock(mu);
    if (first_error.ok())
      first_error = s.with_context("session " + std::to_string(i + 1) + ", " + phase + " run");
    failed = true;
  };
  auto body = [&](size_t i) {
    for (int w = 0; w < warmup && !failed; ++w) {
      auto r = sessions[i]->run(feeds);
      if (!r.ok()) fail(i, r.status(), "warmup");
    }
    sync.arrive_and_wait();  // the timed phase starts together
    while (!failed) {
      const auto t0 = Clock::now();
      if (duration_s > 0 ? !samples[i].empty() &&
                               std::chrono::duration<double>(t0 - start).count() >= duration_s
                         : static_cast<int>(samples[i].size()) >= iterations)
        break;
      auto r = sessions[i]->run(feeds);
      samples[i].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      if (!r.ok()) fail(i, r.status(), "timed");
    }
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < n; ++i) threads.emplace_back(body, i);
  body(0);
  for (auto& t : threads) t.join();
  if (!first_error.ok()) return first_error;
  ConcurrentRuns out;
  out.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& s : samples) {
    out.session_p50_ms.push_back(summarize(s).p50);
    out.samples_ms.insert(out.samples_ms.end(), s.begin(), s.end());
  }
  return out;
}

}  // namespace osprey::cli
