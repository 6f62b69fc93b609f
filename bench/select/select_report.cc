#include "select/select_report.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <cstdio>
#include <set>

namespace osprey::bench::select {
namespace {

std::string fixed(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string raw_text(Criterion c, double v) {
  const std::string s = format_raw(c, v);
  return s.substr(s.find(' ') + 1);
}

// Columns padded to their widest cell, two spaces apart.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

bool several_sources(const Selection& s) {
  std::set<std::string> src;
  for (const auto& r : s.ranking) src.insert(r.candidate.source);
  for (const auto& r : s.ineligible) src.insert(r.candidate.source);
  return src.size() > 1;
}

std::string who(const Candidate& c, bool with_source) {
  std::string s = c.framework + " " + config_label(c);
  if (with_source) s += " [" + c.source + "]";
  return s;
}

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void str(Writer& w, const std::string& s) {
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
}
void opt_num(Writer& w, double v) {
  v < 0 ? (void)w.Null() : (void)w.Double(v);
}

void candidate_fields(Writer& w, const Candidate& c) {
  w.Key("framework"), str(w, c.framework);
  w.Key("version"), str(w, c.version);
  w.Key("source"), str(w, c.source);
  w.Key("config"), w.StartObject();
  if (c.measured == Measured::kThroughServer) {
    w.Key("protocol"), str(w, c.protocol);
    w.Key("load"), str(w, c.load);
    w.Key("failed_requests"), w.Int64(c.failed_requests);
  }
  w.Key("threads"), w.Int(c.threads);
  w.Key("batch"), w.Int64(c.batch);
  w.Key("precision"), str(w, c.precision);
  w.Key("precision_used"), str(w, c.precision_used);
  w.Key("shapes"), str(w, c.shapes);
  w.Key("shape_mode"), str(w, c.shape_mode);
  w.Key("affinity"), str(w, c.affinity);
  w.EndObject();
}

}  // namespace

std::vector<std::string> describe_constraints(const Constraints& k) {
  std::vector<std::string> out;
  for (const auto& l : k.sla)
    out.push_back(str_cat(latency_stat_name(l.stat), " <= ", format_ms(l.max_ms)));
  if (k.max_memory)
    out.push_back("peak RSS <= " + format_bytes(static_cast<double>(*k.max_memory)));
  if (k.min_throughput) out.push_back("throughput >= " + format_rate(*k.min_throughput));
  if (k.min_cosine) out.push_back("cosine >= " + fixed("%.6f", *k.min_cosine));
  if (k.min_top1) out.push_back("top1 >= " + fixed("%.6f", *k.min_top1));
  return out;
}

std::string recommendation_sentence(const Selection& s) {
  if (s.ranking.empty()) return "";
  const RankedCandidate& r = s.ranking[0];
  const Candidate& c = r.candidate;
  std::string config =
      c.measured == Measured::kThroughServer
          ? str_cat("protocol=", c.protocol, ", ", c.load, ", batch=", c.batch)
          : str_cat("threads=", c.threads, ", batch=", c.batch, ", precision=", c.precision,
                    c.precision_used.empty() || c.precision_used == c.precision
                        ? ""
                        : " (ran " + c.precision_used + ")",
                    c.shape_mode == "dynamic" ? "" : ", shape_mode=" + c.shape_mode,
                    c.affinity == "off" ? "" : ", affinity=" + c.affinity);
  // Only what was recorded: a dropped criterion has no value to show.
  std::string values = str_cat(latency_stat_name(s.latency_stat), " ", format_ms(r.raw[0]));
  if (r.raw[1] >= 0) values += ", " + format_rate(r.raw[1]);
  if (r.raw[2] >= 0) values += ", peak RSS " + format_bytes(r.raw[2]);
  if (r.raw[3] >= 0) values += ", cold start " + format_ms(r.raw[3]);
  return str_cat("Recommended: ", c.framework, c.version.empty() ? "" : " " + c.version, " with ",
                 config, ", shapes ", c.shapes, " (total ", fixed("%.3f", r.total), "; ", values,
                 ").");
}

std::string selection_text(const Selection& s, const Constraints& k) {
  const bool src = several_sources(s);
  std::string out = str_cat("Model: ", s.model, "\n", "Candidates: ", s.ranking.size(),
                            " eligible, ", s.ineligible.size(), " ineligible\n", "Weights:");
  for (size_t i = 0; i < kCriteria; ++i)
    out +=
        str_cat(" ", criterion_name(static_cast<Criterion>(i)), "=", fixed("%.3f", s.weights[i]));
  out += str_cat(" (latency = ", latency_stat_name(s.latency_stat), ")\nConstraints: ");
  const auto cons = describe_constraints(k);
  if (cons.empty()) out += "none";
  for (size_t i = 0; i < cons.size(); ++i) out += (i ? ", " : "") + cons[i];
  out += str_cat("\nMeasured: ", measured_name(s.measured), "\n");
  for (const auto& n : s.notes) out += "Note: " + n + "\n";
  out += "\n";

  if (!s.ranking.empty()) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> head = {"rank", "framework", "config"};
    if (src) head.push_back("file");
    for (size_t i = 0; i < kCriteria; ++i)
      head.push_back(criterion_name(static_cast<Criterion>(i)));
    head.push_back("total");
    rows.push_back(head);
    for (size_t n = 0; n < s.ranking.size(); ++n) {
      const RankedCandidate& r = s.ranking[n];
      std::vector<std::string> row = {std::to_string(n + 1), r.candidate.framework,
                                      config_label(r.candidate)};
      if (src) row.push_back(r.candidate.source);
      for (size_t i = 0; i < kCriteria; ++i)
        row.push_back((r.score[i] < 0 ? std::string("n/a") : fixed("%.3f", r.score[i])) + " (" +
                      raw_text(static_cast<Criterion>(i), r.raw[i]) + ")");
      row.push_back(fixed("%.3f", r.total));
      rows.push_back(row);
    }
    out += table(rows) + "\n" + recommendation_sentence(s) + "\n";
  } else {
    out += "No candidate meets the constraints.\n";
  }
  const bool others = s.ranking.size() > 1 || !s.ineligible.empty();
  if (others) out += s.ranking.empty() ? "\nWhy each failed:\n" : "\nWhy the others lost:\n";
  for (size_t n = 1; n < s.ranking.size(); ++n)
    out += str_cat("  ", n + 1, ". ", who(s.ranking[n].candidate, src), ": ", s.ranking[n].why_lost,
                   "\n");
  for (const auto& x : s.ineligible) {
    out += "  -  " + who(x.candidate, src) + ": ineligible: ";
    for (size_t i = 0; i < x.reasons.size(); ++i) out += (i ? "; " : "") + x.reasons[i];
    out += "\n";
  }
  return out;
}

std::string selection_json(const Selection& s, const Constraints& k) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.SetIndent(' ', 1);
  w.StartObject();
  w.Key("model"), str(w, s.model);
  w.Key("latency_stat"), str(w, latency_stat_name(s.latency_stat));
  w.Key("measured"), str(w, s.measured == Measured::kThroughServer ? "server" : "in_process");
  w.Key("notes"), w.StartArray();
  for (const auto& n : s.notes) str(w, n);
  w.EndArray();
  w.Key("weights"), w.StartObject();
  for (size_t i = 0; i < kCriteria; ++i)
    w.Key(criterion_name(static_cast<Criterion>(i))), w.Double(s.weights[i]);
  w.EndObject();
  w.Key("constraints"), w.StartArray();
  for (const auto& c : describe_constraints(k)) str(w, c);
  w.EndArray();
  w.Key("recommendation");
  if (s.ranking.empty()) {
    w.Null();
  } else {
    w.StartObject();
    candidate_fields(w, s.ranking[0].candidate);
    w.Key("total"), w.Double(s.ranking[0].total);
    w.Key("sentence"), str(w, recommendation_sentence(s));
    w.EndObject();
  }
  w.Key("ranking"), w.StartArray();
  for (size_t n = 0; n < s.ranking.size(); ++n) {
    const RankedCandidate& r = s.ranking[n];
    w.StartObject();
    w.Key("rank"), w.Uint64(n + 1);
    candidate_fields(w, r.candidate);
    w.Key("raw"), w.StartObject();
    w.Key("latency_ms"), opt_num(w, r.raw[0]);
    w.Key("throughput_items_per_s"), opt_num(w, r.raw[1]);
    w.Key("peak_rss_bytes"), opt_num(w, r.raw[2]);
    w.Key("cold_start_ms"), opt_num(w, r.raw[3]);
    w.EndObject();
    w.Key("scores"), w.StartObject();
    for (size_t i = 0; i < kCriteria; ++i)
      w.Key(criterion_name(static_cast<Criterion>(i))), opt_num(w, r.score[i]);
    w.EndObject();
    w.Key("total"), w.Double(r.total);
    w.Key("why_lost"), str(w, r.why_lost);
    w.EndObject();
  }
  w.EndArray();
  w.Key("ineligible"), w.StartArray();
  for (const auto& x : s.ineligible) {
    w.StartObject();
    candidate_fields(w, x.candidate);
    w.Key("reasons"), w.StartArray();
    for (const auto& r : x.reasons) str(w, r);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(sb.GetString()) + "\n";
}

}  // namespace osprey::bench::select
