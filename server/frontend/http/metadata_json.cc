#include "frontend/http/metadata_json.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/util/json_util.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cerrno>
#include <cstdlib>
#include <set>
#include <string_view>

#include "frontend/http/json_params.h"
#include "osprey_server/model_config.pb.h"

namespace osprey::server::http {
namespace {

std::string finish(const rapidjson::StringBuffer& b) { return {b.GetString(), b.GetSize()}; }

void write_tensor_metadata(JsonWriter& w, const std::vector<TensorMetadata>& tensors) {
  w.StartArray();
  for (const TensorMetadata& t : tensors) {
    w.StartObject();
    w.Key("name");
    write_string(w, t.name);
    w.Key("datatype");
    write_string(w, t.datatype);
    w.Key("shape");
    w.StartArray();
    for (int64_t d : t.shape) w.Int64(d);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

void write_duration(JsonWriter& w, const char* key, const StatDuration& d) {
  w.Key(key);
  w.StartObject();
  w.Key("count");
  w.Uint64(d.count);
  w.Key("ns");
  w.Uint64(d.ns);
  w.EndObject();
}

}  // namespace

std::string error_json(const std::string& message) {
  rapidjson::StringBuffer b;
  JsonWriter w(b);
  w.StartObject();
  w.Key("error");
  write_string(w, message);
  w.EndObject();
  return finish(b);
}

std::string server_metadata_json(const ServerMetadata& m) {
  rapidjson::StringBuffer b;
  JsonWriter w(b);
  w.StartObject();
  w.Key("name");
  write_string(w, m.name);
  w.Key("version");
  write_string(w, m.version);
  w.Key("extensions");
  w.StartArray();
  for (const std::string& e : m.extensions) write_string(w, e);
  w.EndArray();
  w.EndObject();
  return finish(b);
}

std::string model_metadata_json(const ModelMetadata& m) {
  rapidjson::StringBuffer b;
  JsonWriter w(b);
  w.StartObject();
  w.Key("name");
  write_string(w, m.name);
  w.Key("versions");
  w.StartArray();
  for (const std::string& v : m.versions) write_string(w, v);
  w.EndArray();
  w.Key("platform");
  write_string(w, m.platform);
  w.Key("inputs");
  write_tensor_metadata(w, m.inputs);
  w.Key("outputs");
  write_tensor_metadata(w, m.outputs);
  w.EndObject();
  return finish(b);
}

std::string repository_index_json(const std::vector<RepositoryEntry>& entries) {
  rapidjson::StringBuffer b;
  JsonWriter w(b);
  w.StartArray();
  for (const RepositoryEntry& e : entries) {
    w.StartObject();
    w.Key("name");
    write_string(w, e.name);
    w.Key("version");
    write_string(w, e.version);
    w.Key("state");
    write_string(w, e.state);
    w.Key("reason");
    write_string(w, e.reason);
    w.EndObject();
  }
  w.EndArray();
  return finish(b);
}

std::string statistics_json(const std::vector<ModelStats>& stats) {
  rapidjson::StringBuffer b;
  JsonWriter w(b);
  w.StartObject();
  w.Key("model_stats");
  w.StartArray();
  for (const ModelStats& s : stats) {
    w.StartObject();
    w.Key("name");
    write_string(w, s.name);
    w.Key("version");
    write_string(w, s.version);
    w.Key("last_inference");
    w.Uint64(s.last_inference_ms);
    w.Key("inference_count");
    w.Uint64(s.inference_count);
    w.Key("execution_count");
    w.Uint64(s.execution_count);
    w.Key("inference_stats");
    w.StartObject();
    const InferStats& is = s.inference_stats;
    write_duration(w, "success", is.success);
    write_duration(w, "fail", is.fail);
    write_duration(w, "queue", is.queue);
    write_duration(w, "compute_input", is.compute_input);
    write_duration(w, "compute_infer", is.compute_infer);
    write_duration(w, "compute_output", is.compute_output);
    w.EndObject();
    w.Key("batch_stats");
    w.StartArray();
    for (const BatchStats& bs : s.batch_stats) {
      w.StartObject();
      w.Key("batch_size");
      w.Uint64(bs.batch_size);
      write_duration(w, "compute_input", bs.compute_input);
      write_duration(w, "compute_infer", bs.compute_infer);
      write_duration(w, "compute_output", bs.compute_output);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return finish(b);
}

namespace {

// proto3's JSON mapping prints 64-bit integers as strings ("dims": ["3", "224"]); Triton's
// clients and perf_analyzer read them as numbers, so the values of every int64/uint64 field of
// ModelConfig (names collected from the message descriptors, map keys excepted) become numbers.
void collect_int64_fields(const google::protobuf::Descriptor* d, std::set<std::string>* names,
                          std::set<const google::protobuf::Descriptor*>* seen) {
  using google::protobuf::FieldDescriptor;
  if (!seen->insert(d).second) return;
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (d->options().map_entry() && f->name() == "key") continue;
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_INT64 ||
        f->cpp_type() == FieldDescriptor::CPPTYPE_UINT64)
      names->insert(f->name());
    else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE)
      collect_int64_fields(f->message_type(), names, seen);
  }
}

bool is_int64_field(std::string_view key) {
  static const std::set<std::string> names = [] {
    std::set<std::string> n;
    std::set<const google::protobuf::Descriptor*> seen;
    collect_int64_fields(inference::ModelConfig::descriptor(), &n, &seen);
    return n;
  }();
  return names.count(std::string(key)) > 0;
}

bool parse_integer(const char* s, int64_t* out) {
  if (*s == '\0') return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

void numbers_for_int64_fields(rapidjson::Value& v, bool convert) {
  int64_t n = 0;
  if (convert && v.IsString() && parse_integer(v.GetString(), &n)) {
    v.SetInt64(n);
  } else if (v.IsArray()) {
    for (auto& e : v.GetArray()) numbers_for_int64_fields(e, convert);
  } else if (v.IsObject()) {
    for (auto& m : v.GetObject())
      numbers_for_int64_fields(m.value, is_int64_field(m.name.GetString()));
  }
}

}  // namespace

Result<std::string> model_config_json(const inference::ModelConfig& config) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(config, &json, options);
  if (!status.ok())
    return internal_error("cannot convert the configuration of model '", config.name(),
                          "' to JSON: ", status.ToString());
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError())
    return internal_error("configuration JSON of model '", config.name(), "' does not parse back");
  numbers_for_int64_fields(doc, false);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  doc.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace osprey::server::http
