#include "fake_server.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "osprey_server/model_config.pb.h"

namespace osprey::server::testing {

FakeServer::FakeServer() : FakeServer(ServerLimits{}) {}

FakeServer::FakeServer(const ServerLimits& limits)
    : limits_(limits), thread_([this] { worker(); }) {}

FakeServer::~FakeServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::vector<std::string> FakeServer::loaded() const {
  std::lock_guard<std::mutex> lock(mu_);
  return loaded_;
}

std::vector<std::string> FakeServer::unloaded() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unloaded_;
}

ServerMetadata FakeServer::metadata() const {
  return {"osprey", "0.1.0", {"classification", "model_repository", "statistics"}};
}

Result<ModelMetadata> FakeServer::model_metadata(const std::string& model,
                                                 const std::string& version) const {
  if (model != "echo") return not_found("unknown model '", model, "'");
  if (!version.empty() && version != "1")
    return not_found("model 'echo' has no version '", version, "'");
  return ModelMetadata{"echo",
                       {"1"},
                       "onnxruntime_onnx",
                       {{"INPUT0", "FP32", {-1, 4}}},
                       {{"echo_INPUT0", "FP32", {-1, 4}}}};
}

Result<bool> FakeServer::model_ready(const std::string& model, const std::string&) const {
  if (model == "echo" || model == "fail" || model == "busy") return true;
  if (model == "loading") return false;
  return not_found("unknown model '", model, "'");
}

Status FakeServer::model_config(const std::string& model, const std::string&,
                                inference::ModelConfig* out) const {
  if (model != "echo") return not_found("unknown model '", model, "'");
  out->set_name("echo");
  out->set_platform("onnxruntime_onnx");
  out->set_max_batch_size(8);
  return Status::Ok();
}

namespace {

// The echo model: every input comes back as output "echo_<input>" (those requested, or all).
InferResponse echo(InferRequest& request) {
  InferResponse response;
  response.model_name = request.model_name;
  // std::string(...): GCC 12 warns falsely (-Wrestrict) on assigning "1".
  response.model_version = std::string("1");
  response.id = request.id;
  response.parameters["echoed_inputs"] = static_cast<int64_t>(request.inputs.size());
  for (WireTensor& in : request.inputs) {
    std::string name = "echo_";
    name += in.name;
    in.name = std::move(name);
    const bool wanted = request.outputs.empty() ||
                        std::any_of(request.outputs.begin(), request.outputs.end(),
                                    [&](const RequestedOutput& o) { return o.name == in.name; });
    if (wanted) response.outputs.push_back(std::move(in));
  }
  return response;
}

}  // namespace

void FakeServer::infer_async(InferRequest request, InferCallback done) {
  ++infer_calls;
  const std::string& m = request.model_name;
  if (m == "busy") return done(unavailable("model 'busy': queue full"));
  if (m == "echo_inline") return done(echo(request));
  if (m != "echo" && m != "fail") return done(not_found("unknown model '", m, "'"));
  int64_t delay_ms = 0;
  if (auto it = request.parameters.find("delay_ms"); it != request.parameters.end())
    delay_ms = std::get<int64_t>(it->second);
  schedule(std::chrono::milliseconds(delay_ms),
           [request = std::move(request), done = std::move(done)]() mutable {
             if (request.model_name == "fail") return done(internal_error("backend exploded"));
             done(echo(request));
           });
}

std::vector<RepositoryEntry> FakeServer::repository_index(bool ready_only) const {
  std::vector<RepositoryEntry> all = {{"echo", "1", "READY", ""},
                                      {"broken", "", "UNAVAILABLE", "load failed: bad model"}};
  if (ready_only) all.pop_back();
  return all;
}

Status FakeServer::load_model(const std::string& model) {
  if (model == "locked") return failed_precondition("model control mode is not explicit");
  if (model != "echo" && model != "fail") return not_found("no model '", model, "' in repository");
  std::lock_guard<std::mutex> lock(mu_);
  loaded_.push_back(model);
  return Status::Ok();
}

Status FakeServer::load_model(const std::string& model, const ModelLoadOptions& options) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_load_options_ = options;
  }
  return load_model(model);
}

ModelLoadOptions FakeServer::last_load_options() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_load_options_;
}

Status FakeServer::unload_model(const std::string& model) {
  if (model == "locked") return failed_precondition("model control mode is not explicit");
  if (model != "echo" && model != "fail") return not_found("no model '", model, "' loaded");
  std::lock_guard<std::mutex> lock(mu_);
  unloaded_.push_back(model);
  return Status::Ok();
}

Result<std::vector<ModelStats>> FakeServer::statistics(const std::string& model,
                                                       const std::string&) const {
  if (!model.empty() && model != "echo") return not_found("unknown model '", model, "'");
  ModelStats s;
  s.name = "echo";
  s.version = std::string("1");
  s.last_inference_ms = 1700000000000;
  s.inference_count = 12;
  s.execution_count = 3;
  s.inference_stats.success = {3, 3000};
  s.inference_stats.fail = {1, 100};
  s.inference_stats.queue = {3, 300};
  s.inference_stats.compute_infer = {3, 2000};
  s.batch_stats.push_back({4, {3, 30}, {3, 2000}, {3, 40}});
  return std::vector<ModelStats>{s};
}

void FakeServer::schedule(std::chrono::milliseconds delay, std::function<void()> run) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back({std::chrono::steady_clock::now() + delay, std::move(run)});
  }
  cv_.notify_all();
}

void FakeServer::worker() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (tasks_.empty()) {
      if (stopping_) return;
      cv_.wait(lock);
      continue;
    }
    auto next = std::min_element(tasks_.begin(), tasks_.end(),
                                 [](const Task& a, const Task& b) { return a.due < b.due; });
    if (next->due > std::chrono::steady_clock::now()) {
      cv_.wait_until(lock, next->due);
      continue;
    }
    std::function<void()> run = std::move(next->run);
    tasks_.erase(next);
    lock.unlock();
    run();
    lock.lock();
  }
}

}  // namespace osprey::server::testing
