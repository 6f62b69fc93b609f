#include "core/model_lifecycle.h"

#include <set>

#include "core/version_policy.h"

namespace osprey::server {

ModelLifecycle::ModelLifecycle(VersionLoader loader, const scheduler::Clock* clock,
                               LoadObserver observer, StateObserver on_state_change)
    : loader_(std::move(loader)),
      clock_(clock),
      observer_(std::move(observer)),
      on_state_change_(std::move(on_state_change)) {}

void ModelLifecycle::state_changed() const {
  if (on_state_change_) on_state_change_();
}

ModelLifecycle::~ModelLifecycle() { shutdown(); }

ModelLifecycle::Model& ModelLifecycle::model_entry(const std::string& name) {
  auto& m = models_[name];
  if (!m) m = std::make_unique<Model>();
  return *m;
}

std::shared_future<Status> ModelLifecycle::apply(ScannedModel scan, bool retry) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (shut_down_) {
    std::promise<Status> p;
    p.set_value(unavailable("the server is shutting down"));
    return p.get_future().share();
  }
  Model& m = model_entry(scan.name);
  m.desired = std::move(scan);
  m.want_loaded = true;
  m.retry = m.retry || retry;
  lock.unlock();
  return start(&m);
}

std::shared_future<Status> ModelLifecycle::unload(const std::string& model) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto it = models_.find(model);
  if (it == models_.end()) {
    std::promise<Status> p;
    p.set_value(not_found("model '", model, "' is not in the repository"));
    return p.get_future().share();
  }
  it->second->want_loaded = false;
  lock.unlock();
  return start(it->second.get());
}

std::shared_future<Status> ModelLifecycle::start(Model* m) {
  auto promise = std::make_shared<std::promise<Status>>();
  auto future = promise->get_future().share();
  std::lock_guard<std::mutex> lock(threads_mu_);
  threads_.emplace_back([this, m, promise] {
    Status st = run_operation(m);
    state_changed();  // before the caller learns the operation ended
    promise->set_value(std::move(st));
  });
  return future;
}

void ModelLifecycle::shutdown() {
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (!shut_down_) {
      shut_down_ = true;
      for (auto& [name, m] : models_) m->want_loaded = false;
      std::vector<Model*> all;
      for (auto& [name, m] : models_) all.push_back(m.get());
      lock.unlock();
      for (Model* m : all) (void)start(m);
    }
  }
  for (;;) {
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(threads_mu_);
      threads.swap(threads_);
    }
    if (threads.empty()) break;
    for (auto& t : threads) t.join();
  }
}

Status ModelLifecycle::run_operation(Model* m) {
  std::lock_guard<std::mutex> op(m->op_mu);
  ScannedModel desired;
  bool want_loaded, retry;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    desired = m->desired;
    want_loaded = m->want_loaded;
    retry = m->retry;
    m->retry = false;
  }
  if (!want_loaded) {
    std::vector<int64_t> versions;
    {
      std::shared_lock<std::shared_mutex> lock(mu_);
      for (const auto& [v, slot] : m->slots)
        if (slot.current) versions.push_back(v);
    }
    for (int64_t v : versions) unload_version(m, v, "unloaded");
    std::unique_lock<std::shared_mutex> lock(mu_);
    m->reason = "unloaded";
    return Status::Ok();
  }
  return sync_versions(m, desired, retry);
}

Status ModelLifecycle::sync_versions(Model* m, const ScannedModel& scan, bool retry) {
  if (!scan.config_status.ok()) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    bool serving = false;
    for (const auto& [v, slot] : m->slots) serving = serving || slot.current != nullptr;
    m->reason = (serving ? "reload failed (still serving the previous config): " : "") +
                scan.config_status.message();
    return scan.config_status;
  }
  std::vector<int64_t> available;
  for (const auto& v : scan.versions) available.push_back(v.version);
  VersionSelection sel = select_versions(scan.config.version_policy(), available);
  Status first_error;
  for (int64_t v : sel.serve) {
    for (const auto& sv : scan.versions) {
      if (sv.version != v) continue;
      Status st = load_version(m, scan, sv, retry);
      if (!st.ok() && first_error.ok()) first_error = st;
    }
  }
  std::set<int64_t> keep(sel.serve.begin(), sel.serve.end());
  std::vector<int64_t> to_unload;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    for (int64_t v : sel.missing) {
      Slot& slot = m->slots[v];
      slot.state = "UNAVAILABLE";
      slot.reason = str_cat("version ", v, " is not in the repository");
      if (first_error.ok()) first_error = not_found("model '", scan.name, "': ", slot.reason);
    }
    // A selected version that failed to load leaves an older version serving in its place
    // (newest first): a failed reload never takes a model down.
    size_t failed = 0;
    for (int64_t v : sel.serve)
      if (auto it = m->slots.find(v); it == m->slots.end() || !it->second.current) ++failed;
    for (auto it = m->slots.rbegin(); it != m->slots.rend(); ++it) {
      const auto& [v, slot] = *it;
      if (keep.count(v) || !slot.current) continue;
      if (failed > 0) {
        --failed;
        continue;
      }
      to_unload.push_back(v);
    }
  }
  for (int64_t v : to_unload) unload_version(m, v, "unloaded (not selected by the version policy)");
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (sel.serve.empty() && sel.missing.empty()) {
    m->reason = "no version directory with a model file";
    if (first_error.ok()) first_error = not_found("model '", scan.name, "': ", m->reason);
  } else {
    m->reason.clear();
  }
  return first_error;
}

Status ModelLifecycle::load_version(Model* m, const ScannedModel& scan, const ScannedVersion& v,
                                    bool retry) {
  bool had_current;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    Slot& slot = m->slots[v.version];
    if (slot.current && slot.fingerprint == v.fingerprint) return Status::Ok();
    if (!retry && !slot.failed_fingerprint.empty() && slot.failed_fingerprint == v.fingerprint)
      return Status::Ok();  // failed before with these very files: wait for a change
    had_current = slot.current != nullptr;
    if (!had_current) {
      slot.state = "LOADING";
      slot.reason.clear();
    }
  }
  Result<std::shared_ptr<ServedVersion>> loaded = v.status;
  const int64_t t0 = clock_->now_us();
  if (v.status.ok()) {
    VersionSource source;
    source.model = scan.name;
    source.version = v.version;
    source.model_dir = scan.dir;
    source.model_file = v.model_file;
    source.fingerprint = v.fingerprint;
    source.config = scan.config;
    loaded = loader_(source);
    if (loaded.ok() && !loaded.value())
      loaded = Status(internal_error("the loader returned no version"));
  }
  const double seconds = static_cast<double>(clock_->now_us() - t0) / 1e6;
  if (observer_) observer_(scan.name, v.version, seconds, loaded.status());
  std::shared_ptr<ServedVersion> old;
  Status result;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    Slot& slot = m->slots[v.version];
    if (loaded.ok()) {
      old = std::move(slot.current);
      slot.current = std::move(loaded).value();
      slot.state = "READY";
      slot.reason.clear();
      slot.fingerprint = v.fingerprint;
      slot.failed_fingerprint.clear();
    } else {
      result = loaded.status();
      slot.failed_fingerprint = v.fingerprint.empty() ? "unreadable" : v.fingerprint;
      if (slot.current) {
        slot.reason = "reload failed (still serving the previous files): " + result.message();
      } else {
        slot.state = "UNAVAILABLE";
        slot.reason = result.message();
      }
    }
  }
  state_changed();
  // The new version is taking requests; the old one finishes what it took.
  if (old) old->drain();
  if (!result.ok()) return result.with_context(str_cat("model '", scan.name, "' version ", v.version));
  return result;
}

void ModelLifecycle::unload_version(Model* m, int64_t version, const std::string& reason) {
  std::shared_ptr<ServedVersion> current;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    Slot& slot = m->slots[version];
    current = std::move(slot.current);
    slot.state = "UNLOADING";
    slot.reason.clear();
    slot.fingerprint.clear();
  }
  state_changed();  // no longer ready: watchers learn it before the drain
  if (current) current->drain();
  current.reset();
  std::unique_lock<std::shared_mutex> lock(mu_);
  Slot& slot = m->slots[version];
  slot.state = "UNAVAILABLE";
  slot.reason = reason;
}

const ModelLifecycle::Slot* ModelLifecycle::serving_slot(const Model& m, int64_t version,
                                                         int64_t* chosen, Status* why) const {
  if (version == 0) {
    for (auto it = m.slots.rbegin(); it != m.slots.rend(); ++it) {
      if (it->second.current && it->second.state == "READY") {
        *chosen = it->first;
        return &it->second;
      }
    }
    *why = unavailable("no version is ready", m.reason.empty() ? "" : ": " + m.reason);
    return nullptr;
  }
  auto it = m.slots.find(version);
  if (it == m.slots.end()) {
    *why = not_found("version ", version, " is not known");
    return nullptr;
  }
  if (!it->second.current || it->second.state != "READY") {
    *why = unavailable("version ", version, " is not ready (", it->second.state,
                       it->second.reason.empty() ? "" : ": " + it->second.reason, ")");
    return nullptr;
  }
  *chosen = version;
  return &it->second;
}

Status ModelLifecycle::with_version(
    const std::string& model, int64_t version,
    const std::function<void(ServedVersion&, int64_t version)>& fn) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = models_.find(model);
  if (it == models_.end()) return not_found("model '", model, "' is not in the repository");
  Status why;
  int64_t chosen = 0;
  const Slot* slot = serving_slot(*it->second, version, &chosen, &why);
  if (!slot) return Status(why.code(), str_cat("model '", model, "': ", why.message()));
  fn(*slot->current, chosen);
  return Status::Ok();
}

Result<std::shared_ptr<ServedVersion>> ModelLifecycle::find(const std::string& model,
                                                            int64_t version) const {
  std::shared_ptr<ServedVersion> out;
  Status st = with_version(model, version, [&](ServedVersion&, int64_t chosen) {
    out = models_.at(model)->slots.at(chosen).current;
  });
  if (!st.ok()) return st;
  return out;
}

std::vector<RepositoryEntry> ModelLifecycle::index(bool ready_only) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<RepositoryEntry> out;
  for (const auto& [name, m] : models_) {
    bool any = false;
    for (const auto& [v, slot] : m->slots) {
      if (ready_only && slot.state != "READY") continue;
      // A failed config reload shows on the versions still serving the previous config.
      std::string reason = slot.reason;
      if (reason.empty() && slot.state == "READY") reason = m->reason;
      out.push_back({name, std::to_string(v), slot.state, reason});
      any = true;
    }
    if (!any && !ready_only) out.push_back({name, "", "UNAVAILABLE", m->reason});
  }
  return out;
}

std::vector<std::string> ModelLifecycle::models() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, m] : models_) out.push_back(name);
  return out;
}

std::vector<int64_t> ModelLifecycle::ready_versions(const std::string& model) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<int64_t> out;
  auto it = models_.find(model);
  if (it == models_.end()) return out;
  for (const auto& [v, slot] : it->second->slots)
    if (slot.current && slot.state == "READY") out.push_back(v);
  return out;
}

bool ModelLifecycle::is_ready(const std::string& model, int64_t version) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = models_.find(model);
  if (it == models_.end()) return false;
  Status why;
  int64_t chosen = 0;
  return serving_slot(*it->second, version, &chosen, &why) != nullptr;
}

}  // namespace osprey::server
