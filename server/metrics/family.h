// A metric family: one name, help text and label names; one child metric per label-value tuple.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "metrics/metric.h"
#include "osprey/status.h"

namespace osprey::server::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };
const char* metric_type_name(MetricType type);  // "counter", "gauge", "histogram"

class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, std::vector<std::string> label_names)
      : name_(std::move(name)), help_(std::move(help)), label_names_(std::move(label_names)) {}
  virtual ~FamilyBase() = default;
  virtual MetricType type() const = 0;
  // Appends this family's exposition (HELP, TYPE, samples sorted by label values).
  virtual void render(std::string* out) const = 0;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

 protected:
  Status check_arity(const std::vector<std::string>& values) const;

 private:
  std::string name_;
  std::string help_;
  std::vector<std::string> label_names_;
};

template <class M>
class Family : public FamilyBase {
 public:
  using FamilyBase::FamilyBase;

  // The child for these label values (one per label name, in order), created on first use.
  // The reference stays valid for the family's lifetime. Looking up takes a mutex; keep the
  // reference on a hot path. A wrong number of values is kInvalidArgument.
  Result<M*> get(const std::vector<std::string>& label_values);
  // As get(), for label values the code always passes in the right number: a wrong number is a
  // programming error and throws std::invalid_argument naming the family.
  M& with(const std::vector<std::string>& label_values);

 protected:
  virtual std::unique_ptr<M> make() const = 0;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<M>> children_;
};

class CounterFamily final : public Family<Counter> {
 public:
  using Family::Family;
  MetricType type() const override { return MetricType::kCounter; }
  void render(std::string* out) const override;

 private:
  std::unique_ptr<Counter> make() const override { return std::make_unique<Counter>(); }
};

class GaugeFamily final : public Family<Gauge> {
 public:
  using Family::Family;
  MetricType type() const override { return MetricType::kGauge; }
  void render(std::string* out) const override;

 private:
  std::unique_ptr<Gauge> make() const override { return std::make_unique<Gauge>(); }
};

class HistogramFamily final : public Family<Histogram> {
 public:
  HistogramFamily(std::string name, std::string help, std::vector<std::string> label_names,
                  std::vector<double> bounds)
      : Family(std::move(name), std::move(help), std::move(label_names)),
        bounds_(std::move(bounds)) {}
  MetricType type() const override { return MetricType::kHistogram; }
  void render(std::string* out) const override;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  std::unique_ptr<Histogram> make() const override { return std::make_unique<Histogram>(bounds_); }
  std::vector<double> bounds_;
};

}  // namespace osprey::server::metrics
