#include "core/server_impl.h"

#include <algorithm>
#include <future>

#include "core/config_override.h"
#include "core/cpu_budget.h"
#include "core/datatype.h"
#include "core/osprey_backend.h"
#include "core/processing_model.h"
#include "core/repository.h"
#include "core/request_validator.h"
#include "core/serving_version.h"
#include "core/warmup.h"
#include "scheduler/dynamic_batcher.h"

namespace osprey::server {
namespace {

// What a poll compares to decide whether a model changed.
std::string scan_fingerprint(const ScannedModel& m) {
  std::string out = m.config_status.ok() ? m.config.SerializeAsString() : m.config_status.message();
  for (const auto& v : m.versions)
    out += str_cat("|", v.version, ":", v.fingerprint, ":", v.status.message());
  return out;
}

TensorMetadata tensor_metadata(const std::string& name, inference::DataType type,
                               const google::protobuf::RepeatedField<int64_t>& dims, bool batching) {
  TensorMetadata t;
  t.name = name;
  t.datatype = wire_datatype(type);
  if (batching) t.shape.push_back(-1);
  t.shape.insert(t.shape.end(), dims.begin(), dims.end());
  return t;
}

}  // namespace

Result<std::unique_ptr<Server>> Server::create(const ServerOptions& options) {
  auto server = ServerImpl::create(options, std::make_unique<OspreyBackend>());
  if (!server.ok()) return server.status();
  return std::unique_ptr<Server>(std::move(server).value());
}

Result<std::unique_ptr<ServerImpl>> ServerImpl::create(const ServerOptions& options,
                                                       std::unique_ptr<Backend> backend) {
  if (options.model_repository.empty()) return invalid_argument("model_repository is not set");
  if (options.control_mode == ModelControlMode::kPoll && options.repository_poll_secs < 1)
    return invalid_argument("repository_poll_secs ", options.repository_poll_secs, " must be >= 1");
  if (options.total_threads < 0)
    return invalid_argument("total_threads ", options.total_threads, " is negative");
  if (options.limits.max_tensor_elements < 1 || options.limits.max_queue_size < 1)
    return invalid_argument("limits: max_tensor_elements and max_queue_size must be >= 1");
  OSPREY_ASSIGN_OR_RETURN(auto metrics, ServerMetrics::create());
  std::unique_ptr<ServerImpl> server(new ServerImpl(options, std::move(backend), std::move(metrics)));
  OSPREY_RETURN_IF_ERROR(server->startup());
  return server;
}

ServerImpl::ServerImpl(const ServerOptions& options, std::unique_ptr<Backend> backend,
                       std::unique_ptr<ServerMetrics> metrics)
    : options_(options), backend_(std::move(backend)), metrics_(std::move(metrics)) {
  thread_budget_ = options.total_threads > 0 ? options.total_threads : default_thread_budget();
  lifecycle_ = std::make_unique<ModelLifecycle>(
      [this](const VersionSource& s) { return load_version(s); }, &clock_,
      [this](const std::string& model, int64_t version, double seconds, const Status& st) {
        if (st.ok()) metrics_->observe_load(model, version, seconds);
      },
      [this] { notify_health_changed(); });
}

ServerImpl::~ServerImpl() { shutdown(); }

Result<std::shared_ptr<ServedVersion>> ServerImpl::load_version(const VersionSource& source) {
  BackendOptions bo;
  bo.total_threads = thread_budget_;
  bo.max_tensor_elements = options_.limits.max_tensor_elements;
  // Pre/post-processing stages are checked first: a bad key fails the load before the model.
  auto stages = ProcessingStages::from(source);
  if (!stages.ok()) return stages.status().with_context(str_cat("model '", source.model, "'"));
  VersionSource backend_source = source;
  backend_source.config = backend_config(source.config, *stages);
  OSPREY_ASSIGN_OR_RETURN(std::unique_ptr<LoadedModel> inner, backend_->load(backend_source, bo));
  auto loaded = wrap_with_processing(std::move(inner), source.config, std::move(stages).value(),
                                     options_.limits.max_tensor_elements);
  if (!loaded.ok()) return loaded.status().with_context(str_cat("model '", source.model, "'"));
  Status st = scheduler::DynamicBatcher::validate(
      batcher_config((*loaded)->config(), options_.limits.max_queue_size));
  if (!st.ok()) return st.with_context("dynamic_batching");
  OSPREY_RETURN_IF_ERROR(
      run_warmup(**loaded, source.model_dir, options_.limits.max_tensor_elements));
  return std::shared_ptr<ServedVersion>(std::make_shared<ServingVersion>(
      source.model, source.version, std::move(loaded).value(), options_.limits.max_queue_size,
      &clock_, metrics_->observer(source.model, source.version)));
}

Status ServerImpl::startup() {
  OSPREY_ASSIGN_OR_RETURN(RepositoryScan scan, scan_repository(options_.model_repository));
  std::vector<ScannedModel> to_load;
  if (options_.control_mode == ModelControlMode::kExplicit) {
    for (const auto& name : options_.startup_models) {
      if (name == "*") {
        to_load = scan.models;
        break;
      }
      auto m = scan_model(options_.model_repository, name);
      if (!m.ok()) return m.status().with_context(str_cat("startup model '", name, "'"));
      to_load.push_back(std::move(m).value());
    }
  } else {
    to_load = scan.models;
  }
  std::vector<std::shared_future<Status>> pending;
  for (auto& m : to_load) {
    startup_models_.insert(m.name);
    applied_[m.name] = scan_fingerprint(m);
    pending.push_back(lifecycle_->apply(std::move(m), true));
  }
  for (auto& f : pending) f.wait();  // a failed model is reported in the index, not fatal
  notify_health_changed();
  if (options_.control_mode == ModelControlMode::kPoll)
    poll_thread_ = std::thread([this] { poll_loop(); });
  return Status::Ok();
}

void ServerImpl::poll_loop() {
  std::unique_lock<std::mutex> lock(poll_mu_);
  while (!shutting_down_) {
    poll_cv_.wait_for(lock, std::chrono::seconds(options_.repository_poll_secs),
                      [this] { return shutting_down_.load(); });
    if (shutting_down_) break;
    lock.unlock();
    (void)poll_once();
    lock.lock();
  }
}

Status ServerImpl::poll_once() {
  OSPREY_ASSIGN_OR_RETURN(RepositoryScan scan, scan_repository(options_.model_repository));
  std::vector<std::shared_future<Status>> pending;
  std::set<std::string> present;
  {
    std::lock_guard<std::mutex> lock(applied_mu_);
    for (auto& m : scan.models) {
      present.insert(m.name);
      std::string fp = scan_fingerprint(m);
      auto it = applied_.find(m.name);
      if (it != applied_.end() && it->second == fp) continue;
      applied_[m.name] = fp;
      pending.push_back(lifecycle_->apply(std::move(m), false));
    }
    for (auto it = applied_.begin(); it != applied_.end();) {
      if (present.count(it->first)) {
        ++it;
        continue;
      }
      pending.push_back(lifecycle_->unload(it->first));
      it = applied_.erase(it);
    }
  }
  Status first;
  for (auto& f : pending)
    if (Status st = f.get(); !st.ok() && first.ok()) first = st;
  return first;
}

bool ServerImpl::ready() const {
  if (shutting_down_) return false;
  for (const auto& name : startup_models_)
    if (!lifecycle_->is_ready(name, 0)) return false;
  return true;
}

ServerMetadata ServerImpl::metadata() const {
  ServerMetadata m;
  m.name = options_.server_name;
  m.version = options_.server_version;
  m.extensions = {"model_repository", "model_configuration", "statistics", "schedule_policy"};
  return m;
}

Result<int64_t> ServerImpl::parse_version(const std::string& model,
                                          const std::string& version) const {
  if (version.empty()) return int64_t{0};
  int64_t v = parse_version_name(version);
  if (v < 0) return not_found("model '", model, "': version '", version, "' is not a version number");
  return v;
}

Result<ModelMetadata> ServerImpl::model_metadata(const std::string& model,
                                                 const std::string& version) const {
  OSPREY_ASSIGN_OR_RETURN(int64_t v, parse_version(model, version));
  OSPREY_ASSIGN_OR_RETURN(auto served, lifecycle_->find(model, v));
  const auto& config = static_cast<const ServingVersion&>(*served).config();
  ModelMetadata md;
  md.name = model;
  for (int64_t rv : lifecycle_->ready_versions(model)) md.versions.push_back(std::to_string(rv));
  md.platform = config.platform();
  const bool batching = config.max_batch_size() > 0;
  for (const auto& in : config.input())
    md.inputs.push_back(tensor_metadata(in.name(), in.data_type(), in.dims(), batching));
  for (const auto& out : config.output())
    md.outputs.push_back(tensor_metadata(out.name(), out.data_type(), out.dims(), batching));
  return md;
}

Result<bool> ServerImpl::model_ready(const std::string& model, const std::string& version) const {
  OSPREY_ASSIGN_OR_RETURN(int64_t v, parse_version(model, version));
  auto names = lifecycle_->models();
  if (std::find(names.begin(), names.end(), model) == names.end())
    return not_found("model '", model, "' is not in the repository");
  return lifecycle_->is_ready(model, v);
}

Status ServerImpl::model_config(const std::string& model, const std::string& version,
                                inference::ModelConfig* out) const {
  OSPREY_ASSIGN_OR_RETURN(int64_t v, parse_version(model, version));
  OSPREY_ASSIGN_OR_RETURN(auto served, lifecycle_->find(model, v));
  *out = static_cast<const ServingVersion&>(*served).config();
  return Status::Ok();
}

void ServerImpl::infer_async(InferRequest request, InferCallback done) {
  const uint64_t start_ns = steady_now_ns();
  if (shutting_down_) {
    done(unavailable("the server is shutting down"));
    return;
  }
  auto v = parse_version(request.model_name, request.model_version);
  if (!v.ok()) {
    done(v.status());
    return;
  }
  Status refused;
  const std::string model = request.model_name;
  Status st = lifecycle_->with_version(model, *v, [&](ServedVersion& served, int64_t chosen) {
    auto& sv = static_cast<ServingVersion&>(served);
    auto shape = validate_request(request, sv.config(), options_.limits.max_tensor_elements);
    if (!shape.ok()) {
      sv.record_failure("INVALID", steady_now_ns() - start_ns);
      refused = shape.status().with_context(str_cat("model '", model, "' version ", chosen));
      return;
    }
    refused = sv.submit(std::move(request), *shape, done, start_ns);
    if (!refused.ok()) {
      sv.record_failure("REJECTED", steady_now_ns() - start_ns);
      refused = refused.with_context(str_cat("model '", model, "' version ", chosen));
    }
  });
  if (!st.ok()) {
    done(st);
  } else if (!refused.ok()) {
    done(refused);
  }
}

std::vector<RepositoryEntry> ServerImpl::repository_index(bool ready_only) const {
  std::vector<RepositoryEntry> out = lifecycle_->index(ready_only);
  if (ready_only) return out;
  // Models on disk that were never loaded (explicit mode) are listed too.
  auto scan = scan_repository(options_.model_repository);
  if (!scan.ok()) return out;
  auto known = lifecycle_->models();
  for (const auto& m : scan->models)
    if (std::find(known.begin(), known.end(), m.name) == known.end())
      out.push_back({m.name, "", "UNAVAILABLE", "not loaded"});
  std::sort(out.begin(), out.end(), [](const RepositoryEntry& a, const RepositoryEntry& b) {
    return a.name != b.name ? a.name < b.name : a.version < b.version;
  });
  return out;
}

Status ServerImpl::load_model(const std::string& model) {
  return load_model(model, ModelLoadOptions{});
}

Status ServerImpl::load_model(const std::string& model, const ModelLoadOptions& options) {
  if (options_.control_mode != ModelControlMode::kExplicit)
    return failed_precondition("load_model needs explicit model control mode");
  if (shutting_down_) return unavailable("the server is shutting down");
  if (!options.files.empty() && !options.config)
    return invalid_argument("model '", model,
                            "': file: load parameters need the \"config\" "
                            "parameter too (the configuration of the sent model directory)");
  // A bad override is refused here, before the lifecycle sees it: what serves keeps serving.
  std::optional<inference::ModelConfig> override_config;
  if (options.config) {
    auto parsed = parse_config_override(*options.config, model);
    if (!parsed.ok()) return parsed.status().with_context(str_cat("model '", model, "'"));
    override_config = std::move(parsed).value();
  }
  if (options.files.empty()) {
    OSPREY_ASSIGN_OR_RETURN(ScannedModel scan,
                            scan_model(options_.model_repository, model,
                                       override_config ? &*override_config : nullptr));
    Status st = lifecycle_->apply(std::move(scan), true).get();
    if (st.ok()) forget_override_dirs(model, nullptr);
    return st;
  }
  return load_with_files(model, options, *override_config);
}

Status ServerImpl::load_with_files(const std::string& model, const ModelLoadOptions& options,
                                   const inference::ModelConfig& config) {
  // The model must be in the repository, as Triton asks: files replace its directory's content
  // for this load, they do not add models.
  OSPREY_RETURN_IF_ERROR(scan_model(options_.model_repository, model).status());
  OSPREY_ASSIGN_OR_RETURN(std::shared_ptr<OverrideDirectory> dir,
                          OverrideDirectory::create(model, options.files));
  OSPREY_ASSIGN_OR_RETURN(ScannedModel scan, scan_model(dir->root(), model, &config));
  bool any = false;
  for (const auto& v : scan.versions) any = any || v.status.ok();
  if (!any)
    return invalid_argument(
        "model '", model, "': the load's files hold no version directory with ",
        config.default_model_filename().empty() ? "model.onnx" : config.default_model_filename(),
        " (send e.g. \"file:1/model.onnx\")");
  {
    std::lock_guard<std::mutex> lock(override_dirs_mu_);
    override_dirs_[model].push_back(dir);
  }
  Status st = lifecycle_->apply(std::move(scan), true).get();
  if (st.ok()) forget_override_dirs(model, dir.get());
  return st;
}

void ServerImpl::forget_override_dirs(const std::string& model, const OverrideDirectory* keep) {
  std::vector<std::shared_ptr<OverrideDirectory>> gone;  // removed outside the lock
  std::lock_guard<std::mutex> lock(override_dirs_mu_);
  auto it = override_dirs_.find(model);
  if (it == override_dirs_.end()) return;
  for (auto& d : it->second)
    if (d.get() != keep) gone.push_back(std::move(d));
  std::erase(it->second, nullptr);
  if (it->second.empty()) override_dirs_.erase(it);
}

Status ServerImpl::unload_model(const std::string& model) {
  if (options_.control_mode != ModelControlMode::kExplicit)
    return failed_precondition("unload_model needs explicit model control mode");
  if (!is_valid_model_name(model)) return not_found("model '", model, "' is not in the repository");
  Status st = lifecycle_->unload(model).get();
  if (st.ok()) forget_override_dirs(model, nullptr);
  return st;
}

Result<std::vector<ModelStats>> ServerImpl::statistics(const std::string& model,
                                                       const std::string& version) const {
  std::vector<std::string> names;
  if (model.empty()) {
    names = lifecycle_->models();
  } else {
    auto all = lifecycle_->models();
    if (std::find(all.begin(), all.end(), model) == all.end())
      return not_found("model '", model, "' is not in the repository");
    names.push_back(model);
  }
  OSPREY_ASSIGN_OR_RETURN(int64_t wanted, parse_version(model, version));
  std::vector<ModelStats> out;
  for (const auto& name : names) {
    std::vector<int64_t> versions = lifecycle_->ready_versions(name);
    if (wanted != 0) {
      if (std::find(versions.begin(), versions.end(), wanted) == versions.end())
        return not_found("model '", name, "' version ", wanted, " is not loaded");
      versions = {wanted};
    }
    for (int64_t v : versions) {
      auto served = lifecycle_->find(name, v);
      if (!served.ok()) continue;  // unloaded meanwhile
      out.push_back(static_cast<const ServingVersion&>(**served).stats());
    }
  }
  return out;
}

std::string ServerImpl::prometheus_metrics() const { return metrics_->render(); }

void ServerImpl::shutdown() {
  if (shut_down_.exchange(true)) return;
  {
    std::lock_guard<std::mutex> lock(poll_mu_);
    shutting_down_ = true;
  }
  poll_cv_.notify_all();
  notify_health_changed();  // not ready from here on
  if (poll_thread_.joinable()) poll_thread_.join();
  lifecycle_->shutdown();
  notify_health_changed();  // not live
}

}  // namespace osprey::server
