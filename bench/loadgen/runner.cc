#include "runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace osprey::loadgen {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kLateNs = 1'000'000;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

struct Shared {
  std::mutex mu;
  std::vector<RequestRecord> records;
  std::atomic<bool> stop{false};
  // request-rate mode
  std::mutex schedule_mu;
  ArrivalSchedule* schedule = nullptr;
  int64_t start_ns = 0;
  std::atomic<int64_t> scheduled{0}, late{0}, max_late_ns{0};

  void add(RequestRecord r) {
    std::lock_guard<std::mutex> lock(mu);
    records.push_back(std::move(r));
  }
  std::vector<RequestRecord> take() {
    std::lock_guard<std::mutex> lock(mu);
    return std::exchange(records, {});
  }
};

RequestRecord record_of(const InferOutcome& o, int64_t sent_ns) {
  const int64_t end = now_ns();
  return {end, end - sent_ns, o.send_ns, o.recv_ns, o.ok, o.error};
}

void closed_loop(InferWorker* worker, Shared* shared) {
  while (!shared->stop.load()) {
    const int64_t t0 = now_ns();
    const InferOutcome o = worker->infer();
    shared->add(record_of(o, t0));
  }
}

void open_loop(InferWorker* worker, Shared* shared) {
  while (!shared->stop.load()) {
    int64_t slot;
    {
      std::lock_guard<std::mutex> lock(shared->schedule_mu);
      slot = shared->start_ns + shared->schedule->next_offset_ns();
    }
    // Sleep in short steps so a stop request is seen promptly.
    for (int64_t t = now_ns(); t < slot && !shared->stop.load(); t = now_ns())
      std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<int64_t>(slot - t, 20'000'000)));
    if (shared->stop.load()) return;
    const int64_t lateness = now_ns() - slot;
    ++shared->scheduled;
    if (lateness > kLateNs) {
      ++shared->late;
      int64_t prev = shared->max_late_ns.load();
      while (lateness > prev && !shared->max_late_ns.compare_exchange_weak(prev, lateness)) {
      }
    }
    const InferOutcome o = worker->infer();
    shared->add(record_of(o, slot));  // latency from the scheduled time: client queueing counts
  }
}

}  // namespace

Status validate_settings(const MeasureSettings& s) {
  if (s.duration_s > 0) return Status();
  if (!(s.interval_s > 0)) return invalid_argument("--measurement-interval must be > 0 ms");
  if (s.max_trials < s.stability.windows)
    return invalid_argument("--max-trials must be >= ", s.stability.windows, " (the stability windows)");
  if (!(s.stability.tolerance > 0)) return invalid_argument("--stability-percentage must be > 0");
  return Status();
}

Result<StepResult> run_step(Transport& transport, const LoadSpec& load, const MeasureSettings& settings) {
  OSPREY_RETURN_IF_ERROR(validate_settings(settings));
  const bool rate_mode = load.mode == LoadMode::kRequestRate;
  const int n_workers = rate_mode ? load.max_threads : static_cast<int>(load.value);
  if (n_workers < 1) return invalid_argument("need at least one worker (got ", n_workers, ")");
  std::vector<std::unique_ptr<InferWorker>> workers;
  for (int i = 0; i < n_workers; ++i) {
    OSPREY_ASSIGN_OR_RETURN(auto w, transport.make_worker());
    workers.push_back(std::move(w));
  }
  Shared shared;
  ArrivalSchedule schedule(rate_mode ? load.value : 1, load.distribution, load.seed);
  shared.schedule = &schedule;

  StepResult result;
  result.load = load;
  std::vector<Result<ServerStats>> snapshots;
  snapshots.push_back(transport.statistics());
  std::vector<std::vector<RequestRecord>> window_records;
  std::vector<WindowResult> windows;

  shared.start_ns = now_ns();
  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back(rate_mode ? open_loop : closed_loop, w.get(), &shared);

  const bool fixed = settings.duration_s > 0;
  const double window_s = fixed ? settings.duration_s : settings.interval_s;
  for (;;) {
    const auto begin = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(window_s));
    window_records.push_back(shared.take());
    snapshots.push_back(transport.statistics());
    const double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
    windows.push_back(summarize_window(window_records.back(), elapsed));
    if (fixed) break;
    if (windows_stable(windows, settings.stability)) {
      result.stable = true;
      break;
    }
    if (static_cast<int>(windows.size()) >= settings.max_trials) break;
  }
  shared.stop = true;
  for (auto& t : threads) t.join();

  // The result is the last `stability.windows` windows (or the one fixed window).
  const size_t keep = fixed ? 1 : std::min<size_t>(windows.size(), settings.stability.windows);
  const size_t first = windows.size() - keep;
  double duration = 0;
  for (size_t i = first; i < windows.size(); ++i) duration += windows[i].duration_s;
  result.client = merge_windows({window_records.begin() + first, window_records.end()}, duration);
  result.windows = static_cast<int>(windows.size());
  if (fixed) result.stable = true;
  result.scheduled = shared.scheduled.load();
  result.late = shared.late.load();
  result.max_late_ms = static_cast<double>(shared.max_late_ns.load()) / 1e6;

  const auto& before = snapshots[first];
  const auto& after = snapshots.back();
  Result<ServerStats> delta = !before.ok()  ? Result<ServerStats>(before.status())
                              : !after.ok() ? Result<ServerStats>(after.status())
                                            : stats_delta(*before, *after);
  const WindowResult& c = result.client;
  if (delta.ok()) {
    result.server_delta = *delta;
    result.breakdown = compute_breakdown(c.latency_ms.mean * 1e3, c.avg_send_us, c.avg_recv_us, *delta);
  } else {
    result.server_stats_error = delta.status().message();
    result.breakdown = compute_breakdown(c.latency_ms.mean * 1e3, c.avg_send_us, c.avg_recv_us, {});
    result.breakdown.where = "no server-side breakdown: " + result.server_stats_error;
  }
  return result;
}

}  // namespace osprey::loadgen
