#include "fake_server.h"

#include <chrono>

#include "osprey_server/model_config.pb.h"

namespace osprey::server::testing {

FakeServer::FakeServer() : worker_([this] { worker(); }) {}

FakeServer::~FakeServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
  for (auto& t : sleepers_) t.join();
}

ServerMetadata FakeServer::metadata() const {
  return {"osprey", "0.1.0", {"classification", "model_repository", "statistics", "binary_tensor_data"}};
}

Status FakeServer::check_model(const std::string& model, const std::string& version) const {
  static const char* kModels[] = {"identity", "loading", "busy", "broken", "gated", "slow"};
  bool known = false;
  for (const char* m : kModels) known = known || model == m;
  if (!known) return not_found("unknown model '", model, "'");
  if (!version.empty() && version != "1" && !(model == "identity" && version == "2"))
    return not_found("model '", model, "' has no version ", version);
  return Status::Ok();
}

Result<ModelMetadata> FakeServer::model_metadata(const std::string& model,
                                                 const std::string& version) const {
  OSPREY_RETURN_IF_ERROR(check_model(model, version));
  ModelMetadata md;
  md.name = model;
  md.versions = model == "identity" ? std::vector<std::string>{"1", "2"} : std::vector<std::string>{"1"};
  md.platform = "onnxruntime_onnx";
  md.inputs = {{"INPUT0", "FP32", {-1, 4}}};
  md.outputs = {{"OUTPUT0", "FP32", {-1, 4}}};
  return md;
}

Result<bool> FakeServer::model_ready(const std::string& model, const std::string& version) const {
  OSPREY_RETURN_IF_ERROR(check_model(model, version));
  return model != "loading";
}

Status FakeServer::model_config(const std::string& model, const std::string& version,
                                inference::ModelConfig* out) const {
  OSPREY_RETURN_IF_ERROR(check_model(model, version));
  out->set_name(model);
  out->set_platform("onnxruntime_onnx");
  out->set_max_batch_size(8);
  auto* in = out->add_input();
  in->set_name("INPUT0");
  in->add_dims(4);
  return Status::Ok();
}

Result<InferResponse> identity(const InferRequest& request) {
  InferResponse r;
  r.model_name = request.model_name;
  r.model_version = request.model_version.empty() ? "1" : request.model_version;
  r.id = request.id;
  for (const WireTensor& in : request.inputs) {
    WireTensor out = in;
    if (out.name.rfind("INPUT", 0) == 0) out.name = "OUTPUT" + out.name.substr(5);
    out.parameters.clear();
    bool wanted = request.outputs.empty();
    for (const RequestedOutput& o : request.outputs) wanted = wanted || o.name == out.name;
    if (wanted) r.outputs.push_back(std::move(out));
  }
  for (const RequestedOutput& o : request.outputs) {
    bool found = false;
    for (const WireTensor& t : r.outputs) found = found || t.name == o.name;
    if (!found) return invalid_argument("unknown requested output '", o.name, "'");
  }
  return r;
}

void FakeServer::infer_async(InferRequest request, InferCallback done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back({std::move(request), std::move(done)});
  }
  cv_.notify_all();
}

void FakeServer::worker() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait_for(lock, std::chrono::seconds(10),
                 [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty() && !gated_.empty()) {  // timed out waiting for the gate: release
      for (Job& j : gated_) j.done(identity(j.request));
      gated_.clear();
    }
    if (stop_ && queue_.empty()) break;
    if (queue_.empty()) continue;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    last_request = job.request;
    const std::string& model = job.request.model_name;
    Status st = check_model(model, job.request.model_version);
    if (!st.ok()) {
      job.done(st);
    } else if (model == "busy" || model == "loading") {
      job.done(unavailable("model '", model, "' is not ready: queue full"));
    } else if (model == "broken") {
      job.done(internal_error("model '", model, "' failed"));
    } else if (model == "gated") {
      gated_.push_back(std::move(job));
      int n = static_cast<int>(gated_.size());
      if (n > max_gated_pending) max_gated_pending = n;
      if (n >= gate) {
        for (Job& j : gated_) j.done(identity(j.request));
        gated_.clear();
      }
    } else if (model == "slow") {
      sleepers_.emplace_back([job = std::move(job)]() mutable {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        job.done(identity(job.request));
      });
    } else {
      job.done(identity(job.request));
    }
  }
}

std::vector<RepositoryEntry> FakeServer::repository_index(bool ready_only) const {
  std::vector<RepositoryEntry> all = {{"identity", "1", "READY", ""},
                                      {"loading", "", "UNAVAILABLE", "load failed: bad file"}};
  if (!ready_only) return all;
  return {all[0]};
}

Status FakeServer::load_model(const std::string& model) {
  OSPREY_RETURN_IF_ERROR(check_model(model, ""));
  load_calls.push_back("load:" + model);
  return Status::Ok();
}

Status FakeServer::unload_model(const std::string& model) {
  OSPREY_RETURN_IF_ERROR(check_model(model, ""));
  load_calls.push_back("unload:" + model);
  return Status::Ok();
}

Result<std::vector<ModelStats>> FakeServer::statistics(const std::string& model,
                                                       const std::string& version) const {
  if (!model.empty()) OSPREY_RETURN_IF_ERROR(check_model(model, version));
  ModelStats s;
  s.name = model.empty() ? "identity" : model;
  s.version = "1";
  s.last_inference_ms = 1700000000123;
  s.inference_count = 12;
  s.execution_count = 3;
  s.inference_stats.success = {3, 3000};
  s.inference_stats.fail = {1, 10};
  s.inference_stats.queue = {3, 300};
  s.batch_stats.push_back({4, {3, 30}, {3, 2000}, {3, 40}});
  return std::vector<ModelStats>{s};
}

std::string FakeServer::prometheus_metrics() const {
  return "# TYPE nv_inference_count counter\nnv_inference_count{model=\"identity\",version=\"1\"} 12\n";
}

}  // namespace osprey::server::testing
