#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <cmath>

#include "core/reports.h"

namespace osprey::bench {
namespace {

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void num(Writer& w, double v) {
  if (std::isfinite(v))
    w.Double(v);
  else
    w.Null();
}
void opt_num(Writer& w, double v) {
  v < 0 ? (void)w.Null() : num(w, v);
}
void opt_int(Writer& w, int64_t v) {
  v < 0 ? (void)w.Null() : (void)w.Int64(v);
}
void str(Writer& w, const std::string& s) {
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
}
void key(Writer& w, const char* k) {
  w.Key(k);
}
void strings(Writer& w, const std::vector<std::string>& v) {
  w.StartArray();
  for (const auto& s : v) str(w, s);
  w.EndArray();
}
void numbers(Writer& w, const std::vector<double>& v) {
  w.StartArray();
  for (double d : v) num(w, d);
  w.EndArray();
}

void environment(Writer& w, const Environment& e) {
  w.StartObject();
  key(w, "cpu_model"), str(w, e.cpu_model);
  key(w, "cpu_flags"), strings(w, e.cpu_flags);
  key(w, "logical_cpus"), w.Int(e.logical_cpus);
  key(w, "affinity"), str(w, e.affinity);
  key(w, "affinity_count"), w.Int(e.affinity_count);
  key(w, "cgroup_cpu_quota"), str(w, e.cgroup_cpu_quota);
  key(w, "governor"), str(w, e.governor);
  key(w, "cur_mhz"), opt_num(w, e.cur_mhz);
  key(w, "max_mhz"), opt_num(w, e.max_mhz);
  key(w, "mem_total_mb"), opt_num(w, e.mem_total_mb);
  key(w, "loadavg"), str(w, e.loadavg);
  key(w, "kernel"), str(w, e.kernel);
  key(w, "compiler"), str(w, e.compiler);
  key(w, "libc"), str(w, e.libc);
  key(w, "warnings"), strings(w, e.warnings);
  w.EndObject();
}

void settings(Writer& w, const BenchSettings& s) {
  w.StartObject();
  key(w, "models"), strings(w, s.models);
  key(w, "frameworks"), strings(w, s.frameworks);
  key(w, "threads"), w.StartArray();
  for (int t : s.threads) w.Int(t);
  w.EndArray();
  key(w, "batches"), w.StartArray();
  for (int64_t b : s.batches) w.Int64(b);
  w.EndArray();
  key(w, "precisions"), strings(w, s.precisions);
  key(w, "shape_sets"), strings(w, s.shape_sets);
  key(w, "affinity"), strings(w, s.affinity);
  key(w, "shape_modes"), strings(w, s.shape_modes);
  key(w, "warmup"), w.Int(s.warmup);
  key(w, "mode"), str(w, measure_mode_name(s.plan.mode));
  key(w, "window_iterations"), w.Int(s.plan.window_iterations);
  key(w, "max_windows"), w.Int(s.plan.max_windows);
  key(w, "stability_windows"), w.Int(s.plan.stability.windows);
  key(w, "stability_tolerance"), num(w, s.plan.stability.tolerance);
  key(w, "duration_s"), num(w, s.plan.duration_s);
  key(w, "iterations"), w.Int64(s.plan.iterations);
  key(w, "seed"), w.Uint64(s.seed);
  key(w, "input_source"), str(w, s.input_source);
  key(w, "reference"), str(w, s.reference);
  key(w, "python"), str(w, s.python);
  key(w, "peers_dir"), str(w, s.peers_dir);
  key(w, "peer_timeout_s"), num(w, s.peer_timeout_s);
  key(w, "peer_options"), strings(w, s.peer_options);
  w.EndObject();
}

void cell(Writer& w, const Cell& c) {
  w.StartObject();
  key(w, "id"), str(w, c.id);
  key(w, "model"), str(w, c.model);
  key(w, "shapes"), str(w, c.shape_label);
  key(w, "batch"), w.Int64(c.batch);
  key(w, "shape_mode"), str(w, c.shape_mode);
  key(w, "model_file"), str(w, c.model_file.empty() ? c.model : c.model_file);
  key(w, "threads"), w.Int(c.threads);
  key(w, "affinity"), str(w, c.pinned ? "on" : "off");
  key(w, "precision"), str(w, c.precision);
  key(w, "setup_note"), str(w, c.setup_note);
  key(w, "inputs_dir"), str(w, c.inputs_dir);
  key(w, "inputs"), w.StartArray();
  for (const auto& in : c.inputs) {
    w.StartObject();
    key(w, "name"), str(w, in.name);
    key(w, "dtype"), str(w, dtype_name(in.dtype));
    key(w, "shape"), w.StartArray();
    for (int64_t d : in.shape) w.Int64(d);
    w.EndArray();
    key(w, "source"), str(w, in.source);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void measurement(Writer& w, const BenchReport& r, const Measurement& m) {
  const bool ok = m.status == CellStatus::kOk;
  w.StartObject();
  key(w, "cell"), str(w, r.cells[m.cell].id);
  key(w, "framework"), str(w, m.framework);
  key(w, "status"), str(w, cell_status_name(m.status));
  key(w, "reason"), str(w, m.reason);
  key(w, "settings"),
      w.RawValue(m.settings_json.c_str(), m.settings_json.size(), rapidjson::kObjectType);
  key(w, "precision_used"), str(w, m.precision_used);
  key(w, "notes"), str(w, m.notes);
  key(w, "load_ms"), opt_num(w, m.load_ms);
  key(w, "first_inference_ms"), opt_num(w, m.first_inference_ms);
  key(w, "stable"), w.Bool(ok && m.stable);
  if (ok) {
    const Summary& s = m.summary;
    key(w, "summary"), w.StartObject();
    key(w, "count"), w.Uint64(s.count);
    key(w, "p50_ms"), num(w, s.p50);
    key(w, "p90_ms"), num(w, s.p90);
    key(w, "p95_ms"), num(w, s.p95);
    key(w, "p99_ms"), num(w, s.p99);
    key(w, "min_ms"), num(w, s.min);
    key(w, "max_ms"), num(w, s.max);
    key(w, "mean_ms"), num(w, s.mean);
    key(w, "stdev_ms"), num(w, s.stdev);
    w.EndObject();
    key(w, "throughput_items_per_s"), num(w, m.throughput);
    key(w, "p50_ratio_to_reference"), opt_num(w, ratio_to_reference(r, m));
    key(w, "window_p50_ms"), numbers(w, m.window_p50_ms);
    if (m.latencies_ms.size() <= kMaxRawLatencies) {
      key(w, "latencies_ms"), numbers(w, m.latencies_ms);
    } else {
      key(w, "latency_cdf_ms"), numbers(w, cdf_points(m.latencies_ms, 1001));
    }
  }
  key(w, "rss_bytes"), opt_int(w, m.rss_bytes);
  key(w, "peak_rss_bytes"), opt_int(w, m.peak_rss_bytes);
  key(w, "agreement"), w.StartObject();
  key(w, "reference"), str(w, m.agreement_reference);
  key(w, "note"), str(w, m.agreement_note);
  key(w, "outputs"), w.StartArray();
  for (const auto& a : m.agreement) {
    w.StartObject();
    key(w, "output"), str(w, a.output);
    key(w, "compared"), w.Bool(a.compared);
    key(w, "note"), str(w, a.note);
    if (a.compared) {
      key(w, "max_abs"), num(w, a.max_abs);
      key(w, "max_rel"), num(w, a.max_rel);
      key(w, "cosine"), num(w, a.cosine);
      if (a.topk > 0) {
        key(w, "topk"), w.Int(a.topk);
        key(w, "top1_agreement"), num(w, a.top1_agreement);
        key(w, "topk_overlap"), num(w, a.topk_overlap);
      }
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
}

}  // namespace

std::string json_report(const BenchReport& report) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.SetIndent(' ', 1);
  w.StartObject();
  key(w, "osprey_version"), str(w, report.osprey_version);
  key(w, "started_at"), str(w, report.started_at);
  key(w, "wall_s"), num(w, report.wall_s);
  key(w, "settings"), settings(w, report.settings);
  key(w, "environment"), environment(w, report.environment);
  key(w, "frameworks"), w.StartArray();
  for (const auto& f : report.frameworks) {
    w.StartObject();
    key(w, "name"), str(w, f.name);
    key(w, "available"), w.Bool(f.available);
    key(w, "version"), str(w, f.version);
    key(w, "reason"), str(w, f.reason);
    key(w, "in_process"), w.Bool(f.in_process);
    key(w, "pins_threads"), w.Bool(f.pins_threads);
    key(w, "pin_threads_note"), str(w, f.pin_threads_note);
    w.EndObject();
  }
  w.EndArray();
  key(w, "cells"), w.StartArray();
  for (const auto& c : report.cells) cell(w, c);
  w.EndArray();
  key(w, "measurements"), w.StartArray();
  for (const auto& m : report.measurements) measurement(w, report, m);
  w.EndArray();
  w.EndObject();
  return std::string(sb.GetString()) + "\n";
}

}  // namespace osprey::bench
