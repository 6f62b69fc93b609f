#include "core/osprey_backend.h"

#include <algorithm>
#include <chrono>

#include "core/batch_codec.h"
#include "core/model_config_complete.h"
#include "core/model_config_loader.h"
#include "osprey/session.h"

namespace osprey::server {
namespace {

uint64_t elapsed_ns(std::chrono::steady_clock::time_point since) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now() - since)
                                   .count());
}

class OspreyModel : public LoadedModel {
 public:
  OspreyModel(inference::ModelConfig config, std::vector<std::unique_ptr<Session>> sessions,
              int64_t max_elements)
      : config_(std::move(config)), sessions_(std::move(sessions)), max_elements_(max_elements) {}

  const inference::ModelConfig& config() const override { return config_; }
  int instance_count() const override { return static_cast<int>(sessions_.size()); }

  std::vector<Result<InferResponse>> execute(int instance,
                                             const std::vector<const InferRequest*>& batch,
                                             BatchTiming* timing) override {
    auto result = run(instance, batch, timing);
    if (result.ok()) return std::move(result).value();
    if (batch.size() == 1) return {result.status()};
    // One request's data can fail the whole execution (a string Cast cannot parse, an index out
    // of range): run each request alone so that only the bad ones fail.
    std::vector<Result<InferResponse>> out;
    for (const InferRequest* r : batch) {
      auto alone = run(instance, {r}, nullptr);
      if (alone.ok()) out.push_back(std::move(alone.value()[0]));
      else out.emplace_back(alone.status());
    }
    return out;
  }

 private:
  Result<std::vector<Result<InferResponse>>> run(int instance,
                                                 const std::vector<const InferRequest*>& batch,
                                                 BatchTiming* timing) {
    if (instance < 0 || instance >= instance_count())
      return internal_error("instance ", instance, " does not exist");
    const bool batching = config_.max_batch_size() > 0;
    auto t0 = std::chrono::steady_clock::now();
    std::vector<NamedTensor> inputs;
    std::vector<int64_t> batch_sizes;
    for (const InferRequest* r : batch) {
      int64_t b = 1;
      if (batching && !r->inputs.empty() && !r->inputs[0].shape.empty()) b = r->inputs[0].shape[0];
      batch_sizes.push_back(b);
    }
    for (const auto& in : config_.input()) {
      std::vector<const WireTensor*> parts;
      for (const InferRequest* r : batch)
        for (const auto& t : r->inputs)
          if (t.name == in.name()) parts.push_back(&t);
      if (parts.empty()) continue;  // optional input left out by every request
      if (parts.size() != batch.size())
        return invalid_argument("input '", in.name(), "' is given by some requests of the batch only");
      OSPREY_ASSIGN_OR_RETURN(Tensor t, gather_input(parts, in, batching, max_elements_));
      inputs.emplace_back(in.name(), std::move(t));
    }
    if (timing) timing->compute_input_ns = elapsed_ns(t0);
    auto t1 = std::chrono::steady_clock::now();
    auto outputs = sessions_[static_cast<size_t>(instance)]->run(inputs);
    if (timing) timing->compute_infer_ns = elapsed_ns(t1);
    if (!outputs.ok()) return outputs.status();
    auto t2 = std::chrono::steady_clock::now();
    std::vector<InferResponse> responses(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) {
      responses[i].model_name = batch[i]->model_name;
      responses[i].id = batch[i]->id;
    }
    for (const auto& out_config : config_.output()) {
      const Tensor* tensor = nullptr;
      for (const auto& [name, t] : *outputs)
        if (name == out_config.name()) tensor = &t;
      if (!tensor) return internal_error("output '", out_config.name(), "' was not produced");
      OSPREY_ASSIGN_OR_RETURN(auto pieces, split_output(*tensor, out_config, batching, batch_sizes));
      for (size_t i = 0; i < batch.size(); ++i) {
        if (!wanted(*batch[i], out_config.name())) continue;
        responses[i].outputs.push_back(std::move(pieces[i]));
      }
    }
    for (size_t i = 0; i < batch.size(); ++i) order_outputs(*batch[i], &responses[i]);
    if (timing) timing->compute_output_ns = elapsed_ns(t2);
    std::vector<Result<InferResponse>> out;
    for (auto& r : responses) out.emplace_back(std::move(r));
    return out;
  }

  static bool wanted(const InferRequest& r, const std::string& name) {
    if (r.outputs.empty()) return true;
    return std::any_of(r.outputs.begin(), r.outputs.end(),
                       [&](const RequestedOutput& o) { return o.name == name; });
  }

  // Outputs come back in the order the request asked for them.
  static void order_outputs(const InferRequest& r, InferResponse* response) {
    if (r.outputs.empty()) return;
    std::vector<WireTensor> ordered;
    for (const auto& want : r.outputs)
      for (auto& t : response->outputs)
        if (t.name == want.name) ordered.push_back(std::move(t));
    response->outputs = std::move(ordered);
  }

  inference::ModelConfig config_;
  std::vector<std::unique_ptr<Session>> sessions_;
  int64_t max_elements_;
};

}  // namespace

int threads_per_instance(int parameter_threads, int total_threads, int instances) {
  if (parameter_threads > 0) return parameter_threads;
  return std::max(1, total_threads / std::max(1, instances));
}

Result<std::unique_ptr<LoadedModel>> OspreyBackend::load(const VersionSource& source,
                                                         const BackendOptions& options) {
  inference::ModelConfig config = source.config;
  OSPREY_ASSIGN_OR_RETURN(EngineParameters params, engine_parameters(config));
  const int instances = instance_count(config);
  SessionOptions session_options;
  session_options.threads = threads_per_instance(params.threads, options.total_threads, instances);
  session_options.optimization_level = params.optimization_level;
  session_options.precision = params.precision == "fast" ? Precision::kFast : Precision::kExact;
  session_options.max_tensor_elements = options.max_tensor_elements;
  std::vector<std::unique_ptr<Session>> sessions;
  for (int i = 0; i < instances; ++i) {
    auto session = Session::load(source.model_file, session_options);
    if (!session.ok()) return session.status().with_context(source.model_file);
    if (i == 0) {
      Status st = complete_model_config(session.value()->inputs(), session.value()->outputs(), &config);
      if (!st.ok()) return st.with_context(str_cat("model '", source.model, "'"));
    }
    sessions.push_back(std::move(session).value());
  }
  return std::unique_ptr<LoadedModel>(
      new OspreyModel(std::move(config), std::move(sessions), options.max_tensor_elements));
}

}  // namespace osprey::server
