#include "select/ranking.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <set>
#include <tuple>

namespace osprey::bench::select {
namespace {

bool model_matches(const std::string& recorded, const std::string& wanted) {
  const std::filesystem::path p(recorded);
  return recorded == wanted || p.filename().string() == wanted || p.stem().string() == wanted;
}

std::string join(const std::set<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

Result<std::string> choose_model(const std::vector<Candidate>& all, const std::string& wanted) {
  std::set<std::string> models;
  for (const auto& c : all) models.insert(c.model);
  if (models.empty()) return invalid_argument("the results hold no candidates");
  if (wanted.empty()) {
    if (models.size() > 1)
      return invalid_argument("the results hold ", models.size(),
                              " models; choose one with --model (", join(models), ")");
    return *models.begin();
  }
  std::set<std::string> hits;
  for (const auto& m : models)
    if (model_matches(m, wanted)) hits.insert(m);
  if (hits.empty())
    return not_found("--model '", wanted, "' is not in the results (models: ", join(models), ")");
  if (hits.size() > 1)
    return invalid_argument("--model '", wanted, "' matches several models (", join(hits),
                            "); give the full path");
  return *hits.begin();
}

// A total rounded so that sums that differ only by floating-point noise tie exactly.
double total_key(double total) {
  return std::round(total * 1e9) / 1e9;
}

double missing_last(double v) {
  return v < 0 ? std::numeric_limits<double>::infinity() : v;
}

auto order_key(const RankedCandidate& r, LatencyStat stat) {
  const Candidate& c = r.candidate;
  return std::make_tuple(-total_key(r.total), missing_last(c.latency(stat)), c.framework, c.model,
                         c.shapes, c.batch, c.threads, c.precision, c.precision_used, c.shape_mode,
                         c.affinity, c.protocol, c.load, c.source, c.version, r.raw);
}

std::string fixed3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// Why `loser` ranks below `winner`: the criterion where it fell furthest behind, weighted, or
// for an exact tie the tie-break that decided.
std::string why_lost(const RankedCandidate& winner, const RankedCandidate& loser, const Weights& w,
                     LatencyStat stat) {
  if (total_key(winner.total) == total_key(loser.total)) {
    const Candidate &a = winner.candidate, &b = loser.candidate;
    std::string by;
    if (missing_last(a.latency(stat)) != missing_last(b.latency(stat)))
      by = str_cat(latency_stat_name(stat), " ", format_ms(b.latency(stat)), " vs ",
                   format_ms(a.latency(stat)));
    else if (a.framework != b.framework)
      by = "framework name";
    else
      by = "configuration order";
    return str_cat("tied at total ", fixed3(loser.total), "; ranked lower by tie-break (", by, ")");
  }
  size_t worst = 0;
  double gap = -1;
  for (size_t i = 0; i < kCriteria; ++i) {
    if (w[i] <= 0) continue;
    const double d = w[i] * (winner.score[i] - loser.score[i]);
    if (d > gap) gap = d, worst = i;
  }
  const auto crit = static_cast<Criterion>(worst);
  std::string value = format_raw(crit, loser.raw[worst]);
  std::string best = format_raw(crit, winner.raw[worst]);
  value = value.substr(value.find(' ') + 1);
  best = best.substr(best.find(' ') + 1);
  return str_cat(criterion_name(crit), ": ", value, " vs ", best, ", -", fixed3(gap),
                 " weighted (total ", fixed3(loser.total), " vs ", fixed3(winner.total), ")");
}

// One selection compares one kind of measurement: in-process latency and latency through a
// server differ by the network, queueing and batching, so ranking them together would mislead.
Status check_one_kind(const std::vector<Candidate>& all) {
  const Candidate* first[2] = {nullptr, nullptr};
  for (const Candidate& c : all) {
    const Candidate*& slot = first[c.measured == Measured::kThroughServer ? 1 : 0];
    if (!slot) slot = &c;
  }
  if (!first[0] || !first[1]) return Status::Ok();
  return invalid_argument("the results mix ", measured_name(first[0]->measured), " measurements (",
                          first[0]->source, ") and ", measured_name(first[1]->measured),
                          " measurements (", first[1]->source,
                          "); their latencies are not comparable (a server adds the network, "
                          "queueing and batching), so select over one kind at a time");
}

// Drops each weighted criterion that no candidate in `passing` records, renormalizing the rest,
// with a note. Nothing to drop when `passing` is empty (nothing will be ranked).
Status drop_unrecorded_criteria(const std::vector<Candidate>& passing, Selection* sel) {
  if (passing.empty()) return Status::Ok();
  std::string dropped;
  for (size_t i = 0; i < kCriteria; ++i) {
    const auto crit = static_cast<Criterion>(i);
    if (sel->weights[i] <= 0) continue;
    bool any = false;
    for (const Candidate& c : passing) any = any || raw_value(c, crit, sel->latency_stat) >= 0;
    if (any) continue;
    sel->notes.push_back(str_cat(criterion_name(crit), " (weight ", fixed3(sel->weights[i]),
                                 ") dropped from the weights: no candidate records it",
                                 sel->measured == Measured::kThroughServer
                                     ? " (a load test through a server does not measure it)"
                                     : ""));
    dropped += (dropped.empty() ? "" : ", ") + std::string(criterion_name(crit));
    sel->weights[i] = 0;
  }
  double sum = 0;
  for (double w : sel->weights) sum += w;
  if (sum <= 0)
    return invalid_argument("no candidate records any weighted criterion (", dropped,
                            "); weigh one they record, e.g. --weights latency=1");
  for (double& w : sel->weights) w /= sum;
  return Status::Ok();
}

}  // namespace

std::vector<double> normalize(const std::vector<double>& raw, bool higher_better) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : raw)
    if (v >= 0) lo = std::min(lo, v), hi = std::max(hi, v);
  std::vector<double> out(raw.size(), -1);
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] < 0) continue;
    if (hi == lo)
      out[i] = 1;
    else
      out[i] = higher_better ? (raw[i] - lo) / (hi - lo) : (hi - raw[i]) / (hi - lo);
  }
  return out;
}

double raw_value(const Candidate& c, Criterion criterion, LatencyStat latency_stat) {
  switch (criterion) {
    case Criterion::kLatency: return c.latency(latency_stat);
    case Criterion::kThroughput: return c.throughput;
    case Criterion::kMemory: return static_cast<double>(c.peak_rss_bytes);
    case Criterion::kColdStart: return c.cold_start_ms();
  }
  return -1;
}

std::string format_raw(Criterion criterion, double value) {
  std::string v;
  switch (criterion) {
    case Criterion::kLatency:
    case Criterion::kColdStart: v = format_ms(value); break;
    case Criterion::kThroughput: v = format_rate(value); break;
    case Criterion::kMemory: v = format_bytes(value); break;
  }
  return str_cat(criterion_name(criterion), " ", v);
}

Result<Selection> select_candidates(const std::vector<Candidate>& candidates,
                                    const SelectOptions& options) {
  double wsum = 0;
  for (double w : options.weights) {
    if (!(w >= 0) || !std::isfinite(w)) return invalid_argument("weights must be non-negative");
    wsum += w;
  }
  if (wsum <= 0) return invalid_argument("weights are all zero");
  OSPREY_RETURN_IF_ERROR(check_one_kind(candidates));
  Selection sel;
  OSPREY_ASSIGN_OR_RETURN(sel.model, choose_model(candidates, options.model));
  sel.latency_stat = options.latency_stat;
  if (!candidates.empty()) sel.measured = candidates.front().measured;
  for (size_t i = 0; i < kCriteria; ++i) sel.weights[i] = options.weights[i] / wsum;

  std::vector<Candidate> passing;  // measured and within the constraints
  for (const Candidate& c : candidates) {
    if (c.model != sel.model) continue;
    std::vector<std::string> reasons;
    if (!c.ok)
      reasons.push_back(c.reason.empty() ? "not measured" : c.reason);
    else
      reasons = violations(c, options.constraints);
    if (reasons.empty())
      passing.push_back(c);
    else
      sel.ineligible.push_back({c, std::move(reasons)});
  }
  OSPREY_RETURN_IF_ERROR(drop_unrecorded_criteria(passing, &sel));

  for (const Candidate& c : passing) {
    std::vector<std::string> reasons;
    for (size_t i = 0; i < kCriteria; ++i) {
      const auto crit = static_cast<Criterion>(i);
      if (sel.weights[i] > 0 && raw_value(c, crit, sel.latency_stat) < 0)
        reasons.push_back(str_cat(criterion_name(crit), " not recorded (its weight is ",
                                  fixed3(sel.weights[i]), ")"));
    }
    if (!reasons.empty()) {
      sel.ineligible.push_back({c, std::move(reasons)});
      continue;
    }
    RankedCandidate r;
    r.candidate = c;
    for (size_t i = 0; i < kCriteria; ++i)
      r.raw[i] = raw_value(c, static_cast<Criterion>(i), sel.latency_stat);
    sel.ranking.push_back(std::move(r));
  }

  for (size_t i = 0; i < kCriteria; ++i) {
    std::vector<double> raw;
    for (const auto& r : sel.ranking) raw.push_back(r.raw[i]);
    const auto scores = normalize(raw, higher_is_better(static_cast<Criterion>(i)));
    for (size_t k = 0; k < scores.size(); ++k) sel.ranking[k].score[i] = scores[k];
  }
  for (auto& r : sel.ranking) {
    r.total = 0;
    for (size_t i = 0; i < kCriteria; ++i)
      if (sel.weights[i] > 0) r.total += sel.weights[i] * r.score[i];
  }
  const LatencyStat stat = sel.latency_stat;
  std::sort(sel.ranking.begin(), sel.ranking.end(),
            [stat](const RankedCandidate& a, const RankedCandidate& b) {
              return order_key(a, stat) < order_key(b, stat);
            });
  for (size_t k = 1; k < sel.ranking.size(); ++k)
    sel.ranking[k].why_lost = why_lost(sel.ranking[0], sel.ranking[k], sel.weights, stat);
  std::sort(sel.ineligible.begin(), sel.ineligible.end(),
            [](const IneligibleCandidate& a, const IneligibleCandidate& b) {
              const Candidate &x = a.candidate, &y = b.candidate;
              return std::tie(x.framework, x.shapes, x.batch, x.threads, x.precision,
                              x.precision_used, x.shape_mode, x.affinity, x.protocol, x.load, x.source, x.version,
                              a.reasons) <
                     std::tie(y.framework, y.shapes, y.batch, y.threads, y.precision,
                              y.precision_used, y.shape_mode, y.affinity, y.protocol, y.load, y.source, y.version,
                              b.reasons);
            });
  return sel;
}

}  // namespace osprey::bench::select
