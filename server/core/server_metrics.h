// The server's Prometheus metrics (Triton's inference metrics, osprey_ prefix), all labelled
// by model and version, and the VersionObserver that feeds them.
#pragma once

#include <memory>
#include <string>

#include "core/version_observer.h"
#include "metrics/registry.h"

namespace osprey::server {

class ServerMetrics {
 public:
  static Result<std::unique_ptr<ServerMetrics>> create();

  std::unique_ptr<VersionObserver> observer(const std::string& model, int64_t version);
  void observe_load(const std::string& model, int64_t version, double seconds);
  std::string render() const { return registry_.render(); }

 private:
  friend class MetricsObserver;
  metrics::Registry registry_;
  metrics::CounterFamily* success_ = nullptr;
  metrics::CounterFamily* failure_ = nullptr;
  metrics::CounterFamily* inference_count_ = nullptr;
  metrics::CounterFamily* exec_count_ = nullptr;
  metrics::HistogramFamily* request_duration_ = nullptr;
  metrics::HistogramFamily* queue_duration_ = nullptr;
  metrics::HistogramFamily* input_duration_ = nullptr;
  metrics::HistogramFamily* infer_duration_ = nullptr;
  metrics::HistogramFamily* output_duration_ = nullptr;
  metrics::HistogramFamily* preprocess_duration_ = nullptr;
  metrics::HistogramFamily* postprocess_duration_ = nullptr;
  metrics::GaugeFamily* pending_ = nullptr;
  metrics::HistogramFamily* load_duration_ = nullptr;
};

}  // namespace osprey::server
