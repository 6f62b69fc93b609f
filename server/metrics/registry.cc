#include "metrics/registry.h"

#include <algorithm>
#include <cmath>

#include "metrics/exposition.h"
#include "metrics/process_metrics.h"

namespace osprey::server::metrics {
namespace {

Status check_names(const std::string& name, const std::vector<std::string>& label_names) {
  if (!valid_metric_name(name)) {
    return invalid_argument("metric name \"", name, "\" is not valid ([a-zA-Z_:][a-zA-Z0-9_:]*)");
  }
  for (size_t i = 0; i < label_names.size(); ++i) {
    if (!valid_label_name(label_names[i])) {
      return invalid_argument("metric ", name, ": label name \"", label_names[i],
                              "\" is not valid ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)");
    }
    for (size_t j = 0; j < i; ++j) {
      if (label_names[j] == label_names[i]) {
        return invalid_argument("metric ", name, ": label name \"", label_names[i],
                                "\" appears twice");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status Registry::check_new_name(const std::string& name) const {
  // A histogram also owns name_bucket, name_sum and name_count; keep all of them distinct.
  auto owns = [](const std::string& family, MetricType type, const std::string& n) {
    if (n == family) return true;
    if (type != MetricType::kHistogram) return false;
    return n == family + "_bucket" || n == family + "_sum" || n == family + "_count";
  };
  for (const auto& f : families_) {
    if (owns(f->name(), f->type(), name) || owns(name, MetricType::kHistogram, f->name())) {
      return invalid_argument("metric ", name, " clashes with the registered metric ", f->name());
    }
  }
  for (const auto& c : collectors_) {
    for (const std::string& n : c->metric_names()) {
      if (n == name)
        return invalid_argument("metric ", name, " is already provided by a collector");
    }
  }
  return Status::Ok();
}

Result<CounterFamily*> Registry::add_counter(const std::string& name, const std::string& help,
                                             const std::vector<std::string>& label_names) {
  OSPREY_RETURN_IF_ERROR(check_names(name, label_names));
  std::lock_guard<std::mutex> lock(mu_);
  OSPREY_RETURN_IF_ERROR(check_new_name(name));
  auto family = std::make_unique<CounterFamily>(name, help, label_names);
  CounterFamily* raw = family.get();
  families_.push_back(std::move(family));
  return raw;
}

Result<GaugeFamily*> Registry::add_gauge(const std::string& name, const std::string& help,
                                         const std::vector<std::string>& label_names) {
  OSPREY_RETURN_IF_ERROR(check_names(name, label_names));
  std::lock_guard<std::mutex> lock(mu_);
  OSPREY_RETURN_IF_ERROR(check_new_name(name));
  auto family = std::make_unique<GaugeFamily>(name, help, label_names);
  GaugeFamily* raw = family.get();
  families_.push_back(std::move(family));
  return raw;
}

Result<HistogramFamily*> Registry::add_histogram(const std::string& name, const std::string& help,
                                                 const std::vector<std::string>& label_names,
                                                 std::vector<double> bounds) {
  OSPREY_RETURN_IF_ERROR(check_names(name, label_names));
  if (std::find(label_names.begin(), label_names.end(), "le") != label_names.end()) {
    return invalid_argument("histogram ", name, ": label name \"le\" is reserved for buckets");
  }
  if (bounds.empty()) return invalid_argument("histogram ", name, ": no bucket bounds given");
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i])) {
      return invalid_argument("histogram ", name, ": bucket bound [", i,
                              "] is not finite (+Inf is implicit)");
    }
    if (i > 0 && !(bounds[i] > bounds[i - 1])) {
      return invalid_argument("histogram ", name, ": bucket bounds must be strictly ascending ([",
                              i, "] = ", bounds[i], " after ", bounds[i - 1], ")");
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  OSPREY_RETURN_IF_ERROR(check_new_name(name));
  auto family = std::make_unique<HistogramFamily>(name, help, label_names, std::move(bounds));
  HistogramFamily* raw = family.get();
  families_.push_back(std::move(family));
  return raw;
}

Status Registry::add_collector(std::shared_ptr<const Collector> collector) {
  if (!collector) return invalid_argument("add_collector: null collector");
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& n : collector->metric_names()) {
    OSPREY_RETURN_IF_ERROR(check_new_name(n));
  }
  collectors_.push_back(std::move(collector));
  return Status::Ok();
}

Status Registry::add_process_metrics() {
  return add_collector(std::make_shared<ProcessCollector>());
}

std::string Registry::render() const {
  std::vector<const FamilyBase*> sorted;
  std::vector<std::shared_ptr<const Collector>> collectors;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& f : families_) sorted.push_back(f.get());
    collectors = collectors_;
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const FamilyBase* a, const FamilyBase* b) { return a->name() < b->name(); });
  std::string out;
  for (const FamilyBase* f : sorted) f->render(&out);
  for (const auto& c : collectors) c->render(&out);
  return out;
}

}  // namespace osprey::server::metrics
