#include "metrics/family.h"

#include <stdexcept>

#include "metrics/exposition.h"

namespace osprey::server::metrics {

const char* metric_type_name(MetricType type) {
  switch (type) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
  }
  return "untyped";
}

Status FamilyBase::check_arity(const std::vector<std::string>& values) const {
  if (values.size() != label_names_.size()) {
    return invalid_argument("metric ", name_, " has ", label_names_.size(), " label(s) but ",
                            values.size(), " value(s) were given");
  }
  return Status::Ok();
}

template <class M>
Result<M*> Family<M>::get(const std::vector<std::string>& label_values) {
  OSPREY_RETURN_IF_ERROR(check_arity(label_values));
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = children_[label_values];
  if (!slot) slot = make();
  return slot.get();
}

template <class M>
M& Family<M>::with(const std::vector<std::string>& label_values) {
  Result<M*> m = get(label_values);
  if (!m.ok()) throw std::invalid_argument(m.status().message());
  return **m;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

void CounterFamily::render(std::string* out) const {
  write_header(out, name(), help(), "counter");
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [values, c] : children_) {
    const double fraction = c->fraction();
    const std::string text = fraction == 0 ? std::to_string(c->whole()) : format_value(c->value());
    write_sample(out, name(), label_names(), values, text);
  }
}

void GaugeFamily::render(std::string* out) const {
  write_header(out, name(), help(), "gauge");
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [values, g] : children_) {
    write_sample(out, name(), label_names(), values, format_value(g->value()));
  }
}

void HistogramFamily::render(std::string* out) const {
  write_header(out, name(), help(), "histogram");
  const std::string bucket = name() + "_bucket";
  const std::string sum = name() + "_sum";
  const std::string count = name() + "_count";
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [values, h] : children_) {
    const Histogram::Snapshot s = h->snapshot();
    for (size_t i = 0; i < s.bounds.size(); ++i) {
      write_sample(out, bucket, label_names(), values, std::to_string(s.cumulative[i]), "le",
                   format_value(s.bounds[i]));
    }
    write_sample(out, bucket, label_names(), values, std::to_string(s.count), "le", "+Inf");
    write_sample(out, sum, label_names(), values, format_value(s.sum));
    write_sample(out, count, label_names(), values, std::to_string(s.count));
  }
}

}  // namespace osprey::server::metrics
