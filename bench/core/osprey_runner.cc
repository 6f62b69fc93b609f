#include "core/osprey_runner.h"

#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "osprey/npy.h"

namespace osprey::bench {
namespace {

int64_t proc_status_kb(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::string k = key;
  while (std::getline(f, line)) {
    if (line.rfind(k, 0) == 0) {
      std::istringstream is(line.substr(k.size()));
      int64_t kb = -1;
      is >> kb;
      return kb;
    }
  }
  return -1;
}

}  // namespace

int64_t current_rss_bytes() {
  const int64_t kb = proc_status_kb("VmRSS:");
  return kb < 0 ? -1 : kb * 1024;
}

int64_t peak_rss_bytes() {
  const int64_t kb = proc_status_kb("VmHWM:");
  return kb < 0 ? -1 : kb * 1024;
}

OspreyRunner::OspreyRunner(std::string version, OspreyPlacement placement)
    : version_(std::move(version)), placement_(placement) {}

Result<HelloReply> OspreyRunner::hello() {
  HelloReply h;
  h.framework = name_;
  h.version = version_;
  h.available = true;
  h.pins_threads = true;
  h.pin_threads_note =
      "SessionOptions::pin_threads: worker i of a run pinned to the (i mod k)-th CPU of the "
      "affinity mask; the calling thread is not pinned";
  return h;
}

Result<LoadReply> OspreyRunner::load(const LoadRequest& req) {
  session_.reset();
  SessionOptions options;
  // "fast" is the engine's bf16 mode; the load fails (shown as unavailable) on a CPU without
  // native bf16 rather than running fp32 under the name "fast".
  options.precision = req.precision == "fast" ? Precision::kFast : Precision::kExact;
  options.threads = req.threads;
  options.pin_threads = req.pin_threads;
  pinned_ = req.pin_threads;
  if (pinned_ && !pinned_thread_) pinned_thread_ = std::make_unique<CallThread>();
  double ms = 0;
  auto s = on_session_thread<Result<std::unique_ptr<Session>>>([&] {
    const auto start = std::chrono::steady_clock::now();
    auto loaded = Session::load(req.model, options);
    ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return loaded;
  });
  if (!s.ok()) return s.status();
  session_ = std::move(s).value();
  LoadReply r;
  r.load_ms = ms;
  r.precision_used = session_->options().precision == Precision::kFast ? "bf16" : "fp32";
  r.settings_json = str_cat("{\"threads\":", session_->options().threads,
                            ",\"pin_threads\":", session_->options().pin_threads ? "true" : "false",
                            ",\"optimization_level\":", session_->options().optimization_level,
                            ",\"precision\":\"", precision_name(session_->options().precision), "\"",
                            ",\"in_process\":", in_process() ? "true" : "false", "}");
  r.notes = in_process() ? "measured in the benchmark process around Session::run"
                         : "measured in its own process (osprey bench-adapter) around Session::run";
  return r;
}

Result<std::vector<NamedTensor>> OspreyRunner::read_inputs(const std::string& inputs_dir) const {
  std::vector<NamedTensor> feeds;
  for (const auto& info : session_->inputs()) {
    OSPREY_ASSIGN_OR_RETURN(Tensor t, read_npy(inputs_dir + "/" + info.name + ".npy"));
    feeds.emplace_back(info.name, std::move(t));
  }
  return feeds;
}

template <class T>
T OspreyRunner::on_session_thread(const std::function<T()>& fn) {
  if (!pinned_) return fn();
  std::optional<T> result;
  pinned_thread_->call([&] { result.emplace(fn()); });
  return std::move(*result);
}

Result<RunReply> OspreyRunner::run(const std::string& inputs_dir, int iterations, int warmup) {
  return on_session_thread<Result<RunReply>>(
      [&] { return run_here(inputs_dir, iterations, warmup); });
}

Result<std::vector<std::string>> OspreyRunner::outputs(const std::string& inputs_dir,
                                                       const std::string& out_dir) {
  return on_session_thread<Result<std::vector<std::string>>>(
      [&] { return outputs_here(inputs_dir, out_dir); });
}

Result<RunReply> OspreyRunner::run_here(const std::string& inputs_dir, int iterations, int warmup) {
  if (!session_) return failed_precondition("osprey: run before a successful load");
  OSPREY_ASSIGN_OR_RETURN(std::vector<NamedTensor> feeds, read_inputs(inputs_dir));
  for (int i = 0; i < warmup; ++i) {
    auto r = session_->run(feeds);
    if (!r.ok()) return r.status().with_context("warmup run failed");
  }
  RunReply reply;
  reply.latencies_us.reserve(static_cast<size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto r = session_->run(feeds);
    const auto end = std::chrono::steady_clock::now();
    if (!r.ok()) return r.status().with_context("timed run failed");
    reply.latencies_us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  reply.rss_bytes = current_rss_bytes();
  reply.peak_rss_bytes = peak_rss_bytes();
  return reply;
}

Result<std::vector<std::string>> OspreyRunner::outputs_here(const std::string& inputs_dir,
                                                            const std::string& out_dir) {
  if (!session_) return failed_precondition("osprey: outputs before a successful load");
  OSPREY_ASSIGN_OR_RETURN(std::vector<NamedTensor> feeds, read_inputs(inputs_dir));
  OSPREY_ASSIGN_OR_RETURN(std::vector<NamedTensor> outs, session_->run(feeds));
  std::vector<std::string> names;
  NpyWriteOptions opts;
  opts.bfloat16_as_float32 = true;
  for (const auto& [name, t] : outs) {
    if (name.find('/') != std::string::npos)
      return invalid_argument("output name '", name,
                              "' contains '/' and cannot be written as a file");
    if (t.dtype() == DType::kString) continue;
    OSPREY_RETURN_IF_ERROR(write_npy(out_dir + "/" + name + ".npy", t, opts));
    names.push_back(name);
  }
  return names;
}

}  // namespace osprey::bench
