// An in-memory FrameworkRunner for orchestrator and report tests: scripted latencies, failures
// on demand, outputs written from a fixed tensor, and a shared log of every call in order.
#pragma once

#include <string>
#include <vector>

#include "core/runner.h"
#include "osprey/npy.h"

namespace osprey::bench::testing {

class FakeRunner : public FrameworkRunner {
 public:
  FakeRunner(std::string name, std::vector<std::string>* log) : name_(std::move(name)), log_(log) {}

  bool available = true;
  bool fail_load = false;
  int fail_on_timed_window = -1;                   // 0-based timed window that fails
  std::vector<double> window_latency_us = {1000};  // latency of window i (last repeats)
  std::vector<float> output = {1, 2, 3};
  std::string last_options_json;
  bool pins_threads = false;      // what hello says
  std::string last_model;         // the model file of the last load
  bool last_pin_threads = false;  // its pin_threads

  const std::string& name() const override { return name_; }
  Result<HelloReply> hello() override {
    log_->push_back(name_ + ":hello");
    HelloReply h;
    h.framework = name_;
    h.version = "9.9";
    h.available = available;
    if (!available) h.reason = "pip package " + name_ + " not installed";
    h.pins_threads = pins_threads;
    h.pin_threads_note = pins_threads ? "pins by test" : "no pinning API in the fake";
    return h;
  }
  Result<LoadReply> load(const LoadRequest& req) override {
    log_->push_back(name_ + ":load t" + std::to_string(req.threads) + " " + req.precision);
    calls_ = 0;
    last_options_json = req.options_json;
    last_model = req.model;
    last_pin_threads = req.pin_threads;
    if (fail_load) return unimplemented("unsupported op Foo");
    LoadReply r;
    r.load_ms = 12.5;
    r.settings_json = "{\"threads\":" + std::to_string(req.threads) + "}";
    r.precision_used = req.precision;
    return r;
  }
  Result<RunReply> run(const std::string&, int iterations, int warmup) override {
    log_->push_back(name_ + ":run " + std::to_string(iterations) + "+" + std::to_string(warmup));
    RunReply r;
    if (warmup > 0 || calls_ < 2) {  // first inference and warmup calls are untimed
      ++calls_;
      r.latencies_us.assign(static_cast<size_t>(iterations), 5000);
      return r;
    }
    const int w = windows_++;
    if (w == fail_on_timed_window)
      return unavailable("peer ", name_, " exited with code 3 (stderr tail: boom)");
    const double lat =
        window_latency_us[std::min<size_t>(static_cast<size_t>(w), window_latency_us.size() - 1)];
    r.latencies_us.assign(static_cast<size_t>(iterations), lat);
    r.rss_bytes = 100 << 20;
    r.peak_rss_bytes = 200 << 20;
    return r;
  }
  Result<std::vector<std::string>> outputs(const std::string&,
                                           const std::string& out_dir) override {
    log_->push_back(name_ + ":outputs");
    Tensor t(DType::kFloat32, {static_cast<int64_t>(output.size())});
    for (size_t i = 0; i < output.size(); ++i) t.data<float>()[i] = output[i];
    OSPREY_RETURN_IF_ERROR(write_npy(out_dir + "/y.npy", t));
    return std::vector<std::string>{"y"};
  }

 private:
  std::string name_;
  std::vector<std::string>* log_;
  int calls_ = 0;
  int windows_ = 0;
};

}  // namespace osprey::bench::testing
