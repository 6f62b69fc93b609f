// Owns metric families and renders them in the Prometheus text exposition format, version 0.0.4
// (Content-Type: text/plain; version=0.0.4; charset=utf-8).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "metrics/family.h"
#include "osprey/status.h"

namespace osprey::server::metrics {

inline constexpr const char* kExpositionContentType = "text/plain; version=0.0.4; charset=utf-8";

// Metrics computed when rendered (e.g. from /proc) rather than updated as events happen.
class Collector {
 public:
  virtual ~Collector() = default;
  virtual std::vector<std::string> metric_names() const = 0;
  // Appends complete families (HELP, TYPE, samples).
  virtual void render(std::string* out) const = 0;
};

class Registry {
 public:
  // Registration fails with kInvalidArgument for a bad metric or label name, a name already
  // registered, a histogram label named "le", or (histograms) bounds that are empty, not
  // strictly ascending or not finite. The returned family lives as long as the registry.
  Result<CounterFamily*> add_counter(const std::string& name, const std::string& help,
                                     const std::vector<std::string>& label_names);
  Result<GaugeFamily*> add_gauge(const std::string& name, const std::string& help,
                                 const std::vector<std::string>& label_names);
  Result<HistogramFamily*> add_histogram(const std::string& name, const std::string& help,
                                         const std::vector<std::string>& label_names,
                                         std::vector<double> bounds);
  Status add_collector(std::shared_ptr<const Collector> collector);
  // Adds the process_* metrics (see process_metrics.h), read from /proc at each render.
  Status add_process_metrics();

  // Families sorted by name, then collectors in the order added.
  std::string render() const;

 private:
  Status check_new_name(const std::string& name) const;  // caller holds mu_

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<FamilyBase>> families_;
  std::vector<std::shared_ptr<const Collector>> collectors_;
};

}  // namespace osprey::server::metrics
