#include "core/model_config_loader.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/datatype.h"
#include "processing/parameter_keys.h"

namespace osprey::server {
namespace {

namespace fs = std::filesystem;

// True when `s` is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;
    for (size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

// Every string field of `m` (recursively, map entries included) must be UTF-8: the config is
// served as JSON and over gRPC, where protobuf refuses other bytes.
Status check_utf8_strings(const google::protobuf::Message& m, const std::string& path) {
  using google::protobuf::FieldDescriptor;
  const auto* r = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const FieldDescriptor* f : fields) {
    const std::string name = path.empty() ? f->name() : path + "." + f->name();
    const int count = f->is_repeated() ? r->FieldSize(m, f) : 1;
    for (int i = 0; i < count; ++i) {
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
        const std::string v = f->is_repeated() ? r->GetRepeatedString(m, f, i) : r->GetString(m, f);
        if (!is_valid_utf8(v)) return invalid_argument("field '", name, "' is not valid UTF-8");
      } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        OSPREY_RETURN_IF_ERROR(check_utf8_strings(
            f->is_repeated() ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f), name));
      }
    }
  }
  return Status::Ok();
}
using inference::ModelConfig;

// Keeps protobuf's first error with its position (protobuf counts from 0; we print from 1).
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (!has_error_) {
      has_error_ = true;
      line_ = line + 1;
      column_ = column + 1;
      message_ = message;
    }
  }
  bool has_error() const { return has_error_; }
  std::string describe(const std::string& source) const {
    return str_cat(source, ":", line_, ":", column_, ": ", message_);
  }

 private:
  bool has_error_ = false;
  int line_ = 0;
  int column_ = 0;
  std::string message_;
};

bool is_plain_filename(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

template <class Dims>
Status check_dims(const std::string& what, const Dims& dims) {
  for (int i = 0; i < dims.size(); ++i)
    if (dims.Get(i) < -1)
      return invalid_argument(what, ": dims[", i, "] is ", dims.Get(i),
                              " (a dim is -1 for variable or a size >= 0)");
  return Status::Ok();
}

template <class Dims>
int64_t fixed_numel(const Dims& dims) {  // -1 if any dim is variable or it overflows
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d != 0 && n > INT64_MAX / d) return -1;
    n *= d;
  }
  return n;
}

template <class Tensor>
Status check_reshape(const std::string& what, const Tensor& t) {
  if (!t.has_reshape()) return Status::Ok();
  int variable = 0;
  for (int64_t d : t.reshape().shape()) {
    if (d < -1) return invalid_argument(what, ": reshape dim ", d, " is invalid");
    if (d == -1) ++variable;
  }
  if (variable > 1) return invalid_argument(what, ": reshape may have at most one -1 dim");
  int64_t a = fixed_numel(t.dims()), b = fixed_numel(t.reshape().shape());
  if (a >= 0 && b >= 0 && a != b)
    return invalid_argument(what, ": reshape ", b, " elements does not match dims (", a,
                            " elements)");
  return Status::Ok();
}

Status check_datatype(const std::string& what, inference::DataType type) {
  if (type == inference::TYPE_INVALID) return invalid_argument(what, ": data_type is required");
  if (!inference::DataType_IsValid(type))
    return invalid_argument(what, ": data_type ", static_cast<int>(type), " is unknown");
  return Status::Ok();
}

Status validate_io(const ModelConfig& c) {
  std::set<std::string> seen;
  for (int i = 0; i < c.input_size(); ++i) {
    const auto& in = c.input(i);
    std::string what = str_cat("input[", i, "]");
    if (in.name().empty()) return invalid_argument(what, ": name is required");
    what = str_cat("input '", in.name(), "'");
    if (!seen.insert(in.name()).second) return invalid_argument(what, ": declared twice");
    OSPREY_RETURN_IF_ERROR(check_datatype(what, in.data_type()));
    OSPREY_RETURN_IF_ERROR(check_dims(what, in.dims()));
    OSPREY_RETURN_IF_ERROR(check_reshape(what, in));
    if (in.is_shape_tensor())
      return invalid_argument(what, ": is_shape_tensor is not supported by the Osprey backend");
    if (in.format() != inference::ModelInput::FORMAT_NONE && in.dims_size() != 3)
      return invalid_argument(what, ": format ", inference::ModelInput::Format_Name(in.format()),
                              " needs 3 dims (without the batch dim), got ", in.dims_size());
  }
  seen.clear();
  for (int i = 0; i < c.output_size(); ++i) {
    const auto& out = c.output(i);
    std::string what = str_cat("output[", i, "]");
    if (out.name().empty()) return invalid_argument(what, ": name is required");
    what = str_cat("output '", out.name(), "'");
    if (!seen.insert(out.name()).second) return invalid_argument(what, ": declared twice");
    OSPREY_RETURN_IF_ERROR(check_datatype(what, out.data_type()));
    OSPREY_RETURN_IF_ERROR(check_dims(what, out.dims()));
    OSPREY_RETURN_IF_ERROR(check_reshape(what, out));
    if (out.is_shape_tensor())
      return invalid_argument(what, ": is_shape_tensor is not supported by the Osprey backend");
    if (!out.label_filename().empty() && !is_plain_filename(out.label_filename()))
      return invalid_argument(what, ": label_filename '", out.label_filename(),
                              "' must be a file name inside the model directory");
  }
  return Status::Ok();
}

Status validate_version_policy(const ModelConfig& c) {
  if (!c.has_version_policy()) return Status::Ok();
  const auto& p = c.version_policy();
  if (p.has_specific()) {
    if (p.specific().versions_size() == 0)
      return invalid_argument("version_policy.specific: versions is empty");
    for (int64_t v : p.specific().versions())
      if (v <= 0)
        return invalid_argument("version_policy.specific: version ", v, " is not a positive integer");
  }
  return Status::Ok();
}

Status validate_instance_groups(const ModelConfig& c) {
  int64_t total = 0;
  for (int i = 0; i < c.instance_group_size(); ++i) {
    const auto& g = c.instance_group(i);
    std::string what = str_cat("instance_group[", i, "]");
    if (g.kind() == inference::ModelInstanceGroup::KIND_GPU)
      return invalid_argument(what, ": kind KIND_GPU is not supported (Osprey serves on the CPU; "
                                    "use KIND_CPU)");
    if (g.kind() != inference::ModelInstanceGroup::KIND_CPU &&
        g.kind() != inference::ModelInstanceGroup::KIND_AUTO)
      return invalid_argument(what, ": kind ",
                              inference::ModelInstanceGroup::Kind_Name(g.kind()),
                              " is not supported (use KIND_CPU or KIND_AUTO)");
    if (g.count() < 0) return invalid_argument(what, ": count ", g.count(), " is negative");
    total += g.count() == 0 ? 1 : g.count();
  }
  if (total > kMaxInstanceCount)
    return invalid_argument("instance_group: ", total, " instances in all, the limit is ",
                            kMaxInstanceCount);
  return Status::Ok();
}

Status validate_queue_policy(const std::string& what, const inference::ModelQueuePolicy& q) {
  if (!inference::ModelQueuePolicy::TimeoutAction_IsValid(q.timeout_action()))
    return invalid_argument(what, ": timeout_action ", static_cast<int>(q.timeout_action()),
                            " is unknown");
  return Status::Ok();
}

Status validate_dynamic_batching(const ModelConfig& c) {
  if (!c.has_dynamic_batching()) return Status::Ok();
  const auto& db = c.dynamic_batching();
  if (c.max_batch_size() == 0)
    return invalid_argument("dynamic_batching: needs max_batch_size > 0");
  for (int32_t b : db.preferred_batch_size())
    if (b < 1 || b > c.max_batch_size())
      return invalid_argument("dynamic_batching.preferred_batch_size: ", b,
                              " is outside [1, max_batch_size = ", c.max_batch_size(), "]");
  if (db.max_queue_delay_microseconds() > kMaxQueueDelayMicroseconds)
    return invalid_argument("dynamic_batching.max_queue_delay_microseconds: ",
                            db.max_queue_delay_microseconds(), " is over the limit of ",
                            kMaxQueueDelayMicroseconds);
  if (db.priority_levels() == 0) {
    if (db.default_priority_level() != 0)
      return invalid_argument("dynamic_batching.default_priority_level: ",
                              db.default_priority_level(), " is set but priority_levels is 0");
    if (!db.priority_queue_policy().empty())
      return invalid_argument("dynamic_batching.priority_queue_policy: set but priority_levels is 0");
  } else {
    if (db.priority_levels() > 1000)
      return invalid_argument("dynamic_batching.priority_levels: ", db.priority_levels(),
                              " is over the limit of 1000");
    if (db.default_priority_level() < 1 || db.default_priority_level() > db.priority_levels())
      return invalid_argument("dynamic_batching.default_priority_level: ",
                              db.default_priority_level(), " is outside [1, priority_levels = ",
                              db.priority_levels(), "]");
    for (const auto& [level, policy] : db.priority_queue_policy()) {
      if (level < 1 || level > db.priority_levels())
        return invalid_argument("dynamic_batching.priority_queue_policy: level ", level,
                                " is outside [1, priority_levels = ", db.priority_levels(), "]");
      OSPREY_RETURN_IF_ERROR(validate_queue_policy(
          str_cat("dynamic_batching.priority_queue_policy[", level, "]"), policy));
    }
  }
  return validate_queue_policy("dynamic_batching.default_queue_policy", db.default_queue_policy());
}

Status validate_warmup(const ModelConfig& c) {
  for (int i = 0; i < c.model_warmup_size(); ++i) {
    const auto& w = c.model_warmup(i);
    std::string what = str_cat("model_warmup[", i, "]", w.name().empty() ? "" : " '" + w.name() + "'");
    uint32_t limit = c.max_batch_size() > 0 ? static_cast<uint32_t>(c.max_batch_size()) : 1;
    if (w.batch_size() < 1 || w.batch_size() > limit)
      return invalid_argument(what, ": batch_size ", w.batch_size(), " is outside [1, ", limit, "]");
    if (w.count() > kMaxWarmupCount)
      return invalid_argument(what, ": count ", w.count(), " is over the limit of ", kMaxWarmupCount);
    if (w.inputs().empty()) return invalid_argument(what, ": inputs is empty");
    for (const auto& [name, in] : w.inputs()) {
      std::string iwhat = str_cat(what, " input '", name, "'");
      OSPREY_RETURN_IF_ERROR(check_datatype(iwhat, in.data_type()));
      for (int64_t d : in.dims())
        if (d < 0) return invalid_argument(iwhat, ": dims must be fixed sizes >= 0, got ", d);
      using In = inference::ModelWarmup::Input;
      if (in.input_data_type_case() == In::INPUT_DATA_TYPE_NOT_SET)
        return invalid_argument(iwhat, ": set one of zero_data, random_data, input_data_file");
      if (in.input_data_type_case() == In::kInputDataFile && !is_plain_filename(in.input_data_file()))
        return invalid_argument(iwhat, ": input_data_file '", in.input_data_file(),
                                "' must be a file name inside the model's warmup directory");
    }
  }
  return Status::Ok();
}

Result<int> parse_int_parameter(const std::string& key, const std::string& value, int lo, int hi) {
  int v = 0;
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, v);
  if (ec != std::errc() || ptr != end || value.empty())
    return invalid_argument("parameters '", key, "': '", value, "' is not an integer");
  if (v < lo || v > hi)
    return invalid_argument("parameters '", key, "': ", v, " is outside [", lo, ", ", hi, "]");
  return v;
}

}  // namespace

Result<ModelConfig> parse_model_config(std::string_view text, const std::string& source) {
  if (text.size() > kMaxConfigBytes)
    return invalid_argument(source, ": ", text.size(), " bytes is over the limit of ",
                            kMaxConfigBytes);
  ModelConfig config;
  FirstErrorCollector errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.SetRecursionLimit(32);
  std::string copy(text);
  if (!parser.ParseFromString(copy, &config)) {
    if (errors.has_error()) return invalid_argument(errors.describe(source));
    return invalid_argument(source, ": not a valid model configuration");
  }
  return config;
}

Status validate_model_config(const std::string& model_name, ModelConfig* config) {
  ModelConfig& c = *config;
  OSPREY_RETURN_IF_ERROR(check_utf8_strings(c, ""));
  if (c.name().empty()) c.set_name(model_name);
  if (c.name() != model_name)
    return invalid_argument("name '", c.name(), "' does not match the model directory '",
                            model_name, "'");
  if (!c.platform().empty() && c.platform() != "onnxruntime_onnx")
    return invalid_argument("platform '", c.platform(),
                            "' is not supported (Osprey serves \"onnxruntime_onnx\" models)");
  if (!c.backend().empty() && c.backend() != "onnxruntime" && c.backend() != "osprey")
    return invalid_argument("backend '", c.backend(),
                            "' is not supported (use \"osprey\" or \"onnxruntime\")");
  if (c.platform().empty()) c.set_platform("onnxruntime_onnx");
  if (c.backend().empty()) c.set_backend("osprey");
  if (c.max_batch_size() < 0)
    return invalid_argument("max_batch_size ", c.max_batch_size(), " is negative");
  if (!c.default_model_filename().empty() && !is_plain_filename(c.default_model_filename()))
    return invalid_argument("default_model_filename '", c.default_model_filename(),
                            "' must be a file name inside the version directory");
  OSPREY_RETURN_IF_ERROR(validate_io(c));
  OSPREY_RETURN_IF_ERROR(validate_version_policy(c));
  OSPREY_RETURN_IF_ERROR(validate_instance_groups(c));
  OSPREY_RETURN_IF_ERROR(validate_dynamic_batching(c));
  OSPREY_RETURN_IF_ERROR(validate_warmup(c));
  return engine_parameters(c).status();
}

Result<ModelConfig> load_model_config(const std::string& model_dir, const std::string& model_name) {
  fs::path path = fs::path(model_dir) / "config.pbtxt";
  ModelConfig config;
  std::error_code ec;
  if (fs::exists(path, ec)) {
    if (!fs::is_regular_file(path, ec))
      return invalid_argument(path.string(), ": not a regular file");
    if (fs::file_size(path, ec) > kMaxConfigBytes)
      return invalid_argument(path.string(), ": over the limit of ", kMaxConfigBytes, " bytes");
    std::ifstream in(path, std::ios::binary);
    if (!in) return not_found(path.string(), ": cannot be read");
    std::stringstream text;
    text << in.rdbuf();
    OSPREY_ASSIGN_OR_RETURN(config, parse_model_config(text.str(), path.string()));
  }
  Status st = validate_model_config(model_name, &config);
  if (!st.ok()) return st.with_context(path.string());
  return config;
}

Result<EngineParameters> engine_parameters(const ModelConfig& config) {
  EngineParameters p;
  for (const auto& [key, param] : config.parameters()) {
    const std::string& value = param.string_value();
    if (key == "threads") {
      OSPREY_ASSIGN_OR_RETURN(p.threads, parse_int_parameter(key, value, 0, kMaxEngineThreads));
    } else if (key == "optimization_level") {
      OSPREY_ASSIGN_OR_RETURN(p.optimization_level, parse_int_parameter(key, value, 0, 3));
    } else if (key == "precision") {
      if (value != "exact" && value != "fast")
        return invalid_argument("parameters 'precision': '", value,
                                "' is not supported (\"exact\" or \"fast\")");
      p.precision = value;
    } else if (!processing::is_processing_parameter(key)) {
      return invalid_argument("parameters: unknown key '", key,
                              "' (Osprey knows threads, optimization_level, precision and the "
                              "pre/post-processing keys of docs/SERVER.md)");
    }
  }
  return p;
}

std::string model_config_to_json(const ModelConfig& config) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(config, &json, options).ok()) return "{}";
  return json;
}

int instance_count(const ModelConfig& config) {
  int total = 0;
  for (const auto& g : config.instance_group()) total += g.count() == 0 ? 1 : g.count();
  return total == 0 ? 1 : total;
}

}  // namespace osprey::server
