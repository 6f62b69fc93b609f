#include "select/results_reader.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "select/json_fields.h"
#include "select/perf_reader.h"

namespace osprey::bench::select {
namespace {

using json::integer;
using json::member;
using json::number;
using json::string;
using json::Value;

// The lowest cosine and top-1 agreement over a bench measurement's compared outputs. An output
// that could not be compared leaves agreement unknown (-1) with its note.
void read_agreement(const Value& agreement, Candidate* c) {
  const Value* note = member(agreement, "note");
  const Value* ref = member(agreement, "reference");
  const Value* outs = member(agreement, "outputs");
  const std::string note_text = note && note->IsString() ? note->GetString() : "";
  if (note_text == "reference for output agreement") {
    c->is_reference = true;
    return;
  }
  if (!ref || !ref->IsString() || ref->GetStringLength() == 0 || !outs || !outs->IsArray() ||
      outs->Empty()) {
    c->agreement_note = note_text.empty() ? "outputs were not compared" : note_text;
    return;
  }
  double cos = 2, top1 = 2;
  for (const auto& o : outs->GetArray()) {
    const Value* compared = member(o, "compared");
    if (!compared || !compared->IsBool() || !compared->GetBool()) {
      const Value* n = member(o, "note");
      const Value* name = member(o, "output");
      c->agreement_note = str_cat("output '", name && name->IsString() ? name->GetString() : "?",
                                  "' not compared: ", n && n->IsString() ? n->GetString() : "");
      return;
    }
    const Value* v = member(o, "cosine");
    if (v && v->IsNumber()) cos = std::min(cos, v->GetDouble());
    const Value* t = member(o, "top1_agreement");
    if (t && t->IsNumber()) top1 = std::min(top1, t->GetDouble());
  }
  c->min_cosine = cos > 1.5 ? -1 : cos;
  c->min_top1 = top1 > 1.5 ? -1 : top1;
  if (c->min_cosine < 0) c->agreement_note = "no cosine recorded";
}

struct CellInfo {
  std::string model, shapes, precision, shape_mode, affinity;
  int64_t batch = 1;
  int threads = 1;
};

Result<std::vector<Candidate>> parse_bench(const Value& doc, const std::string& source) {
  const Value* cells = member(doc, "cells");
  const Value* ms = member(doc, "measurements");
  if (!cells->IsArray() || !ms->IsArray())
    return invalid_argument(source, ": 'cells' and 'measurements' must be arrays");
  std::map<std::string, CellInfo> by_id;
  for (rapidjson::SizeType i = 0; i < cells->Size(); ++i) {
    const Value& cv = (*cells)[i];
    const std::string where = str_cat(source, ": cells[", i, "]");
    CellInfo ci;
    OSPREY_ASSIGN_OR_RETURN(std::string id, string(cv, "id", where, true));
    OSPREY_ASSIGN_OR_RETURN(ci.model, string(cv, "model", where, true));
    OSPREY_ASSIGN_OR_RETURN(ci.shapes, string(cv, "shapes", where, false));
    OSPREY_ASSIGN_OR_RETURN(ci.precision, string(cv, "precision", where, false));
    OSPREY_ASSIGN_OR_RETURN(ci.shape_mode, string(cv, "shape_mode", where, false));
    OSPREY_ASSIGN_OR_RETURN(ci.affinity, string(cv, "affinity", where, false));
    OSPREY_ASSIGN_OR_RETURN(ci.batch, integer(cv, "batch", where, 1));
    OSPREY_ASSIGN_OR_RETURN(int64_t t, integer(cv, "threads", where, 1));
    ci.threads = static_cast<int>(t);
    by_id[id] = ci;
  }
  std::map<std::string, std::string> versions;
  if (const Value* fws = member(doc, "frameworks"); fws && fws->IsArray())
    for (const auto& f : fws->GetArray()) {
      const Value* n = member(f, "name");
      const Value* v = member(f, "version");
      if (n && n->IsString() && v && v->IsString()) versions[n->GetString()] = v->GetString();
    }
  std::vector<Candidate> out;
  for (rapidjson::SizeType i = 0; i < ms->Size(); ++i) {
    const Value& m = (*ms)[i];
    const std::string where = str_cat(source, ": measurements[", i, "]");
    OSPREY_ASSIGN_OR_RETURN(std::string cell_id, string(m, "cell", where, true));
    auto cell = by_id.find(cell_id);
    if (cell == by_id.end()) return invalid_argument(where, ": unknown cell '", cell_id, "'");
    Candidate c;
    c.source = source;
    OSPREY_ASSIGN_OR_RETURN(c.framework, string(m, "framework", where, true));
    c.version = versions[c.framework];
    c.model = cell->second.model;
    c.shapes = cell->second.shapes.empty() ? "default" : cell->second.shapes;
    c.batch = cell->second.batch;
    c.threads = cell->second.threads;
    c.precision = cell->second.precision;
    if (!cell->second.shape_mode.empty()) c.shape_mode = cell->second.shape_mode;
    if (!cell->second.affinity.empty()) c.affinity = cell->second.affinity;
    OSPREY_ASSIGN_OR_RETURN(c.precision_used, string(m, "precision_used", where, false));
    OSPREY_ASSIGN_OR_RETURN(std::string status, string(m, "status", where, true));
    OSPREY_ASSIGN_OR_RETURN(std::string reason, string(m, "reason", where, false));
    c.ok = status == "ok";
    if (!c.ok) c.reason = status + (reason.empty() ? "" : ": " + reason);
    OSPREY_ASSIGN_OR_RETURN(c.load_ms, number(m, "load_ms", where));
    OSPREY_ASSIGN_OR_RETURN(c.first_inference_ms, number(m, "first_inference_ms", where));
    OSPREY_ASSIGN_OR_RETURN(double peak, number(m, "peak_rss_bytes", where));
    c.peak_rss_bytes = static_cast<int64_t>(peak);
    if (c.ok) {
      const Value* s = member(m, "summary");
      if (!s || !s->IsObject()) return invalid_argument(where, ": status ok but no 'summary'");
      const char* keys[kLatencyStats] = {"p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms"};
      for (size_t k = 0; k < kLatencyStats; ++k) {
        OSPREY_ASSIGN_OR_RETURN(c.latency_ms[k], number(*s, keys[k], where + ".summary"));
      }
      OSPREY_ASSIGN_OR_RETURN(c.throughput, number(m, "throughput_items_per_s", where));
    }
    if (const Value* a = member(m, "agreement"); a && a->IsObject()) read_agreement(*a, &c);
    out.push_back(std::move(c));
  }
  return out;
}

Result<std::vector<Candidate>> parse_candidate_list(const Value& doc, const std::string& source) {
  const Value* list = member(doc, "candidates");
  if (!list->IsArray()) return invalid_argument(source, ": 'candidates' must be an array");
  std::vector<Candidate> out;
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const Value& v = (*list)[i];
    const std::string where = str_cat(source, ": candidates[", i, "]");
    if (!v.IsObject()) return invalid_argument(where, " is not an object");
    Candidate c;
    c.source = source;
    OSPREY_ASSIGN_OR_RETURN(c.framework, string(v, "framework", where, true));
    OSPREY_ASSIGN_OR_RETURN(c.version, string(v, "version", where, false));
    OSPREY_ASSIGN_OR_RETURN(c.model, string(v, "model", where, true));
    OSPREY_ASSIGN_OR_RETURN(std::string shapes, string(v, "shapes", where, false));
    if (!shapes.empty()) c.shapes = shapes;
    OSPREY_ASSIGN_OR_RETURN(c.batch, integer(v, "batch", where, 1));
    OSPREY_ASSIGN_OR_RETURN(int64_t threads, integer(v, "threads", where, 1));
    c.threads = static_cast<int>(threads);
    OSPREY_ASSIGN_OR_RETURN(std::string precision, string(v, "precision", where, false));
    if (!precision.empty()) c.precision = precision;
    OSPREY_ASSIGN_OR_RETURN(c.precision_used, string(v, "precision_used", where, false));
    OSPREY_ASSIGN_OR_RETURN(std::string status, string(v, "status", where, false));
    OSPREY_ASSIGN_OR_RETURN(std::string reason, string(v, "reason", where, false));
    c.ok = status.empty() || status == "ok";
    if (!c.ok) c.reason = status + (reason.empty() ? "" : ": " + reason);
    const char* keys[kLatencyStats] = {"p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms"};
    for (size_t k = 0; k < kLatencyStats; ++k) {
      OSPREY_ASSIGN_OR_RETURN(c.latency_ms[k], number(v, keys[k], where));
    }
    OSPREY_ASSIGN_OR_RETURN(c.throughput, number(v, "throughput_items_per_s", where));
    OSPREY_ASSIGN_OR_RETURN(double peak, number(v, "peak_rss_bytes", where));
    c.peak_rss_bytes = static_cast<int64_t>(peak);
    OSPREY_ASSIGN_OR_RETURN(c.load_ms, number(v, "load_ms", where));
    OSPREY_ASSIGN_OR_RETURN(c.first_inference_ms, number(v, "first_inference_ms", where));
    OSPREY_ASSIGN_OR_RETURN(c.min_cosine, number(v, "min_cosine", where));
    OSPREY_ASSIGN_OR_RETURN(c.min_top1, number(v, "top1_agreement", where));
    if (const Value* r = member(v, "is_reference"); r && r->IsBool()) c.is_reference = r->GetBool();
    if (!c.is_reference && c.min_cosine < 0) c.agreement_note = "no agreement recorded";
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

const char* latency_stat_name(LatencyStat s) {
  switch (s) {
    case LatencyStat::kP50: return "p50";
    case LatencyStat::kP90: return "p90";
    case LatencyStat::kP95: return "p95";
    case LatencyStat::kP99: return "p99";
    case LatencyStat::kMax: return "max";
  }
  return "?";
}

const char* measured_name(Measured m) {
  return m == Measured::kThroughServer ? "through a server (osprey perf)"
                                       : "in-process (osprey bench)";
}

std::string config_label(const Candidate& c) {
  if (c.measured == Measured::kThroughServer)
    return str_cat("protocol=", c.protocol, " ", c.load, " batch=", c.batch, " shapes=", c.shapes);
  std::string s = str_cat("threads=", c.threads, " batch=", c.batch, " precision=", c.precision,
                          " shapes=", c.shapes);
  if (!c.precision_used.empty() && c.precision_used != c.precision) s += " ran=" + c.precision_used;
  if (c.shape_mode != "dynamic") s += " shape_mode=" + c.shape_mode;
  if (c.affinity != "off") s += " affinity=" + c.affinity;
  return s;
}

Result<std::vector<Candidate>> parse_results(const std::string& text, const std::string& source) {
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError())
    return invalid_argument(source, ": not valid JSON at offset ", doc.GetErrorOffset(), ": ",
                            rapidjson::GetParseError_En(doc.GetParseError()));
  if (!doc.IsObject()) return invalid_argument(source, ": expected a JSON object");
  if (member(doc, "cells") && member(doc, "measurements")) return parse_bench(doc, source);
  if (member(doc, "settings") && member(doc, "steps")) return parse_perf(doc, source);
  if (const Value* f = member(doc, "format"); f && member(doc, "candidates")) {
    if (!f->IsString() || std::string(f->GetString()) != "osprey-candidates-1")
      return invalid_argument(source, ": unknown 'format' (expected \"osprey-candidates-1\")");
    return parse_candidate_list(doc, source);
  }
  return invalid_argument(source,
                          ": neither an `osprey bench` results.json ('cells' and 'measurements'), "
                          "an `osprey perf` perf.json ('settings' and 'steps') nor a candidate list ('format': \"osprey-candidates-1\", 'candidates')");
}

Result<std::vector<Candidate>> read_results(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("cannot read results file ", path);
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return not_found("cannot read results file ", path);
  return parse_results(ss.str(), path);
}

}  // namespace osprey::bench::select
