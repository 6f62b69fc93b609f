// What one `osprey bench` run measured: the data every report writer (CSV, JSON, Markdown) and
// the HTML renderer read. Plain structs, no behaviour.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/environment.h"
#include "core/stability.h"
#include "core/statistics.h"
#include "osprey/tensor.h"

namespace osprey::bench {

struct InputDesc {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
  std::string source;  // "random uniform, seed 0" or "file x.npy"
};

// One configuration measured for every framework: model x input shapes x batch x shape mode x
// threads x affinity x precision.
struct Cell {
  std::string id;     // unique, file-name safe: "m0_s0_b1_t1_fp32", "m0_s0_b1_fixed_t1_pinned_fp32"
  std::string model;  // absolute path of the model as given
  std::string shape_label;  // "default" or "x=1x3x512x512"
  int64_t batch = 1;
  // "dynamic": frameworks load `model` as given; "fixed": they load `model_file`, a copy whose
  // graph inputs have this cell's concrete shapes (or `model` itself when they already had).
  std::string shape_mode = "dynamic";
  std::string model_file;  // the file frameworks load (absolute); "" = `model`
  int threads = 1;
  bool pinned = false;     // worker threads pinned to CPUs (LoadRequest::pin_threads)
  std::string precision;   // "fp32" | "fast"
  std::string setup_note;  // how the cell was prepared (e.g. what the fixed-shape copy changed)
  std::vector<InputDesc> inputs;
  std::string inputs_dir;  // <inputs_dir>/<input name>.npy, identical for every framework
};

struct FrameworkInfo {
  std::string name;
  bool available = false;
  std::string version;
  std::string reason;  // why not available
  bool in_process = false;
  bool pins_threads = false;     // honours LoadRequest::pin_threads (from hello)
  std::string pin_threads_note;  // how it pins, or why it cannot
};

// Agreement of one output with the reference framework's output of the same name.
struct OutputAgreement {
  std::string output;
  bool compared = false;
  std::string note;  // why not compared (shape mismatch, missing output, ...)
  double max_abs = 0, max_rel = 0, cosine = 0;
  int topk = 0;                // k used; 0 when the output does not look like class scores
  double top1_agreement = -1;  // fraction of rows whose argmax matches; -1 when not a classifier
  double topk_overlap = -1;  // mean |top-k(a) ∩ top-k(b)| / k over rows; -1 when not a classifier
};

enum class CellStatus { kOk, kUnavailable, kLoadFailed, kRunFailed };
const char* cell_status_name(CellStatus s);  // "ok", "unavailable", "load_failed", "run_failed"

// One framework in one cell.
struct Measurement {
  size_t cell = 0;
  std::string framework;
  CellStatus status = CellStatus::kOk;
  std::string reason;
  std::string settings_json = "{}";  // what the framework chose, as reported (a JSON object)
  std::string precision_used;
  std::string notes;
  double load_ms = -1;
  double first_inference_ms = -1;
  std::vector<double> latencies_ms;  // every timed run, in order
  std::vector<double> window_p50_ms;
  bool stable = false;
  Summary summary;
  double throughput = 0;  // items (batch x runs) per second of summed latency
  int64_t rss_bytes = -1, peak_rss_bytes = -1;
  std::string agreement_reference;  // framework the outputs were compared with ("" = none)
  std::string agreement_note;
  std::vector<OutputAgreement> agreement;
};

struct BenchSettings {
  std::vector<std::string> models;
  std::vector<std::string> frameworks;
  std::vector<int> threads;
  std::vector<int64_t> batches;
  std::vector<std::string> precisions;
  std::vector<std::string> shape_sets;   // labels
  std::vector<std::string> affinity;     // "off" / "on", in sweep order
  std::vector<std::string> shape_modes;  // "dynamic" / "fixed", in sweep order
  int warmup = 10;
  MeasurePlan plan;
  uint64_t seed = 0;
  std::string input_source;  // "random uniform" or "files"
  std::string reference;     // framework for output agreement
  std::string python;
  std::string peers_dir;
  double peer_timeout_s = 0;
  std::vector<std::string> peer_options;  // "framework:key=value" as given
};

struct BenchReport {
  std::string osprey_version;
  std::string started_at;  // ISO 8601 UTC
  double wall_s = 0;
  BenchSettings settings;
  Environment environment;
  std::vector<FrameworkInfo> frameworks;
  std::vector<Cell> cells;
  std::vector<Measurement> measurements;  // cells x frameworks, cell-major
};

}  // namespace osprey::bench
