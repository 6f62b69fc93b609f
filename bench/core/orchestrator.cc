#include "core/orchestrator.h"

#include <filesystem>

#include "core/agreement.h"
#include "core/schedule.h"
#include "osprey/npy.h"

namespace osprey::bench {
namespace fs = std::filesystem;

const char* cell_status_name(CellStatus s) {
  switch (s) {
    case CellStatus::kOk: return "ok";
    case CellStatus::kUnavailable: return "unavailable";
    case CellStatus::kLoadFailed: return "load_failed";
    case CellStatus::kRunFailed: return "run_failed";
  }
  return "?";
}

namespace {

Status make_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return invalid_argument("cannot create directory ", dir, ": ", ec.message());
  return Status::Ok();
}

void fail(Measurement* m, CellStatus status, const Status& why) {
  m->status = status;
  m->reason = why.message();
}

void record_window(Measurement* m, MeasureProgress* p, const RunReply& r) {
  std::vector<double> ms;
  ms.reserve(r.latencies_us.size());
  for (double us : r.latencies_us) ms.push_back(us / 1000.0);
  for (double v : ms) {
    m->latencies_ms.push_back(v);
    p->measured_s += v / 1000.0;
  }
  p->iterations += static_cast<int64_t>(ms.size());
  m->window_p50_ms.push_back(percentile(ms, 50));
  p->window_p50_ms = m->window_p50_ms;
  if (r.rss_bytes >= 0) m->rss_bytes = r.rss_bytes;
  if (r.peak_rss_bytes >= 0) m->peak_rss_bytes = std::max(m->peak_rss_bytes, r.peak_rss_bytes);
}

// Writes each framework's outputs and compares them with the reference's.
void compare_cell(const std::vector<FrameworkRunner*>& runners, const Cell& cell,
                  const OrchestratorOptions& options, std::vector<Measurement>* ms) {
  std::vector<std::vector<std::string>> names(runners.size());
  std::vector<std::string> dirs(runners.size());
  std::vector<bool> have(runners.size(), false);
  for (size_t f = 0; f < runners.size(); ++f) {
    Measurement& m = (*ms)[f];
    if (m.status != CellStatus::kOk) continue;
    dirs[f] = options.work_dir + "/outputs/" + cell.id + "/" + m.framework;
    if (Status s = make_dir(dirs[f]); !s.ok()) {
      m.agreement_note = s.message();
      continue;
    }
    auto out = runners[f]->outputs(cell.inputs_dir, dirs[f]);
    if (!out.ok()) {
      m.agreement_note = "outputs not available: " + out.status().message();
      continue;
    }
    names[f] = out.value();
    have[f] = true;
  }
  size_t ref = runners.size();
  for (size_t f = 0; f < runners.size(); ++f)
    if (have[f] && (*ms)[f].framework == options.reference) ref = f;
  for (size_t f = 0; f < runners.size() && ref == runners.size(); ++f)
    if (have[f]) ref = f;
  if (ref == runners.size()) return;
  (*ms)[ref].agreement_note = "reference for output agreement";
  for (size_t f = 0; f < runners.size(); ++f) {
    if (f == ref || !have[f]) continue;
    Measurement& m = (*ms)[f];
    m.agreement_reference = (*ms)[ref].framework;
    for (const auto& name : names[ref]) {
      OutputAgreement a;
      a.output = name;
      auto r = read_npy(dirs[ref] + "/" + name + ".npy");
      auto o = read_npy(dirs[f] + "/" + name + ".npy");
      if (!r.ok())
        a.note = "reference output unreadable: " + r.status().message();
      else if (!o.ok())
        a.note = "output missing or unreadable: " + o.status().message();
      else
        a = compare_outputs(name, r.value(), o.value());
      m.agreement.push_back(std::move(a));
    }
  }
}

}  // namespace

Status run_benchmark(const std::vector<FrameworkRunner*>& runners,
                     const OrchestratorOptions& options, BenchReport* report,
                     ProgressBar* progress) {
  OSPREY_RETURN_IF_ERROR(validate_plan(options.plan));
  if (options.warmup < 0) return invalid_argument("warmup must be >= 0, not ", options.warmup);
  if (options.work_dir.empty()) return invalid_argument("a work directory is required");
  OSPREY_RETURN_IF_ERROR(make_dir(options.work_dir));

  report->frameworks.clear();
  for (FrameworkRunner* r : runners) {
    FrameworkInfo info;
    info.name = r->name();
    info.in_process = r->in_process();
    auto h = r->hello();
    if (!h.ok()) {
      info.reason = h.status().message();
    } else {
      info.available = h->available;
      info.version = h->version;
      info.reason = h->reason;
      info.pins_threads = h->pins_threads;
      info.pin_threads_note = h->pin_threads_note;
    }
    report->frameworks.push_back(info);
  }

  report->measurements.clear();
  const size_t n = runners.size();
  for (size_t c = 0; c < report->cells.size(); ++c) {
    const Cell& cell = report->cells[c];
    if (progress) progress->update(c, cell.id);
    std::vector<Measurement> ms(n);
    std::vector<MeasureProgress> prog(n);
    for (size_t f = 0; f < n; ++f) {
      Measurement& m = ms[f];
      m.cell = c;
      m.framework = runners[f]->name();
      if (!report->frameworks[f].available) {
        m.status = CellStatus::kUnavailable;
        m.reason = report->frameworks[f].reason;
        continue;
      }
      if (cell.pinned && !report->frameworks[f].pins_threads) {
        m.status = CellStatus::kUnavailable;
        const std::string& why = report->frameworks[f].pin_threads_note;
        m.reason = "thread pinning is not supported by " + m.framework +
                   (why.empty() ? std::string() : ": " + why);
        continue;
      }
      LoadRequest req;
      req.model = cell.model_file.empty() ? cell.model : cell.model_file;
      req.threads = cell.threads;
      req.pin_threads = cell.pinned;
      req.precision = cell.precision;
      req.batch = cell.batch;
      req.inputs = cell.inputs;
      req.work_dir = options.work_dir + "/work/" + m.framework;
      if (auto it = options.load_options_json.find(m.framework);
          it != options.load_options_json.end())
        req.options_json = it->second;
      if (Status s = make_dir(req.work_dir); !s.ok()) return s;
      auto load = runners[f]->load(req);
      if (!load.ok()) {
        fail(&m, CellStatus::kLoadFailed, load.status());
        continue;
      }
      m.load_ms = load->load_ms;
      m.settings_json = load->settings_json;
      m.precision_used = load->precision_used;
      m.notes = load->notes;
      if (!cell.setup_note.empty()) m.notes += (m.notes.empty() ? "" : "; ") + cell.setup_note;
      auto first = runners[f]->run(cell.inputs_dir, 1, 0);
      if (!first.ok()) {
        fail(&m, CellStatus::kRunFailed, first.status().with_context("first inference"));
        continue;
      }
      m.first_inference_ms = first->latencies_us.empty() ? -1 : first->latencies_us[0] / 1000.0;
      if (options.warmup > 0) {
        auto warm = runners[f]->run(cell.inputs_dir, 1, options.warmup - 1);
        if (!warm.ok()) {
          fail(&m, CellStatus::kRunFailed, warm.status().with_context("warmup"));
          continue;
        }
      }
    }
    while (true) {
      std::vector<bool> wants(n, false);
      for (size_t f = 0; f < n; ++f)
        wants[f] =
            ms[f].status == CellStatus::kOk && next_window_iterations(options.plan, prog[f]) > 0;
      const std::vector<size_t> order = next_round(wants);
      if (order.empty()) break;
      for (size_t f : order) {
        auto r = runners[f]->run(cell.inputs_dir, next_window_iterations(options.plan, prog[f]), 0);
        if (!r.ok()) {
          fail(&ms[f], CellStatus::kRunFailed, r.status());
          continue;
        }
        record_window(&ms[f], &prog[f], r.value());
      }
    }
    for (size_t f = 0; f < n; ++f) {
      Measurement& m = ms[f];
      if (m.status != CellStatus::kOk) continue;
      m.stable = is_stable(m.window_p50_ms, options.plan.stability);
      m.summary = summarize(m.latencies_ms);
      m.throughput = prog[f].measured_s > 0
                         ? static_cast<double>(cell.batch) * static_cast<double>(m.summary.count) /
                               prog[f].measured_s
                         : 0;
    }
    if (options.compare_outputs) compare_cell(runners, cell, options, &ms);
    for (auto& m : ms) report->measurements.push_back(std::move(m));
  }
  if (progress) progress->finish();
  return Status::Ok();
}

}  // namespace osprey::bench
