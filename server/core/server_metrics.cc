#include "core/server_metrics.h"

namespace osprey::server {

class MetricsObserver : public VersionObserver {
 public:
  MetricsObserver(ServerMetrics* m, std::string model, std::string version)
      : m_(m), labels_{std::move(model), std::move(version)},
        success_(m->success_->with(labels_)),
        inference_count_(m->inference_count_->with(labels_)),
        exec_count_(m->exec_count_->with(labels_)),
        request_(m->request_duration_->with(labels_)),
        queue_(m->queue_duration_->with(labels_)),
        input_(m->input_duration_->with(labels_)),
        infer_(m->infer_duration_->with(labels_)),
        output_(m->output_duration_->with(labels_)),
        preprocess_(m->preprocess_duration_->with(labels_)),
        postprocess_(m->postprocess_duration_->with(labels_)),
        pending_(m->pending_->with(labels_)) {}

  void on_success(uint64_t request_ns, uint64_t queue_ns, const BatchTiming& t) override {
    success_.inc();
    request_.observe(seconds(request_ns));
    queue_.observe(seconds(queue_ns));
  }
  void on_failure(const std::string& reason, uint64_t request_ns) override {
    m_->failure_->with({labels_[0], labels_[1], reason}).inc();
    request_.observe(seconds(request_ns));
  }
  void on_execution(int64_t batch_size, const BatchTiming& t) override {
    exec_count_.inc();
    inference_count_.inc(batch_size);
    input_.observe(seconds(t.compute_input_ns));
    infer_.observe(seconds(t.compute_infer_ns));
    output_.observe(seconds(t.compute_output_ns));
    if (t.preprocess_ns) preprocess_.observe(seconds(*t.preprocess_ns));
    if (t.postprocess_ns) postprocess_.observe(seconds(*t.postprocess_ns));
  }
  void on_pending(int64_t delta) override { pending_.add(static_cast<double>(delta)); }

 private:
  static double seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }
  ServerMetrics* m_;
  std::vector<std::string> labels_;
  metrics::Counter& success_;
  metrics::Counter& inference_count_;
  metrics::Counter& exec_count_;
  metrics::Histogram& request_;
  metrics::Histogram& queue_;
  metrics::Histogram& input_;
  metrics::Histogram& infer_;
  metrics::Histogram& output_;
  metrics::Histogram& preprocess_;
  metrics::Histogram& postprocess_;
  metrics::Gauge& pending_;
};

Result<std::unique_ptr<ServerMetrics>> ServerMetrics::create() {
  auto m = std::unique_ptr<ServerMetrics>(new ServerMetrics());
  metrics::Registry& r = m->registry_;
  const std::vector<std::string> mv = {"model", "version"};
  const auto& buckets = metrics::default_latency_buckets_seconds();
  OSPREY_ASSIGN_OR_RETURN(m->success_, r.add_counter("osprey_inference_request_success_total",
                                                     "Successful inference requests", mv));
  OSPREY_ASSIGN_OR_RETURN(
      m->failure_, r.add_counter("osprey_inference_request_failure_total",
                                 "Failed inference requests, by reason", {"model", "version", "reason"}));
  OSPREY_ASSIGN_OR_RETURN(m->inference_count_,
                          r.add_counter("osprey_inference_count_total",
                                        "Inferences performed (batch items, not requests)", mv));
  OSPREY_ASSIGN_OR_RETURN(m->exec_count_, r.add_counter("osprey_inference_exec_count_total",
                                                        "Backend executions (batches)", mv));
  OSPREY_ASSIGN_OR_RETURN(m->request_duration_,
                          r.add_histogram("osprey_request_duration_seconds",
                                          "End-to-end request duration", mv, buckets));
  OSPREY_ASSIGN_OR_RETURN(m->queue_duration_,
                          r.add_histogram("osprey_queue_duration_seconds",
                                          "Time requests wait in the queue", mv, buckets));
  OSPREY_ASSIGN_OR_RETURN(m->input_duration_,
                          r.add_histogram("osprey_compute_input_duration_seconds",
                                          "Time to prepare a batch's inputs", mv, buckets));
  OSPREY_ASSIGN_OR_RETURN(m->infer_duration_,
                          r.add_histogram("osprey_compute_infer_duration_seconds",
                                          "Time the engine runs a batch", mv, buckets));
  OSPREY_ASSIGN_OR_RETURN(m->output_duration_,
                          r.add_histogram("osprey_compute_output_duration_seconds",
                                          "Time to split a batch's outputs", mv, buckets));
  OSPREY_ASSIGN_OR_RETURN(
      m->preprocess_duration_,
      r.add_histogram("osprey_preprocess_duration_seconds",
                      "Time to decode and prepare a batch's images (part of compute input)", mv,
                      buckets));
  OSPREY_ASSIGN_OR_RETURN(
      m->postprocess_duration_,
      r.add_histogram("osprey_postprocess_duration_seconds",
                      "Time to classify a batch's outputs (part of compute output)", mv, buckets));
  OSPREY_ASSIGN_OR_RETURN(m->pending_, r.add_gauge("osprey_pending_requests",
                                                   "Requests queued, not yet running", mv));
  OSPREY_ASSIGN_OR_RETURN(m->load_duration_,
                          r.add_histogram("osprey_model_load_duration_seconds",
                                          "Time to load and warm a model version", mv,
                                          {0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120}));
  OSPREY_RETURN_IF_ERROR(r.add_process_metrics());
  return m;
}

std::unique_ptr<VersionObserver> ServerMetrics::observer(const std::string& model, int64_t version) {
  return std::make_unique<MetricsObserver>(this, model, std::to_string(version));
}

void ServerMetrics::observe_load(const std::string& model, int64_t version, double seconds) {
  load_duration_->with({model, std::to_string(version)}).observe(seconds);
}

}  // namespace osprey::server
