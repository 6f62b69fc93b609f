#include "core/adapter_server.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "osprey/npy.h"

namespace osprey::bench {
namespace {

namespace fs = std::filesystem;
using rapidjson::Value;
using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// The dtypes a load may declare: numpy's names of those with an .npy form (adapter_common.py).
constexpr std::array<const char*, 12> kDtypes = {"float32", "float16", "float64", "int64",
                                                 "int32",   "int16",   "int8",    "uint64",
                                                 "uint32",  "uint16",  "uint8",   "bool"};

std::string to_json(const Value& v) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  v.Accept(w);
  return sb.GetString();
}

std::string json_text(const std::string& s) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  return sb.GetString();
}

std::string error_answer(const std::string& message) {
  return "{\"ok\":false,\"error\":" + json_text(message) + "}";
}

// ---- field checks, worded as adapter_common.py words them ----------------------------------

Result<const Value*> require(const Value& obj, const char* key, const char* what) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) return invalid_argument(what, ": missing field '", key, "'");
  return &it->value;
}

Result<std::string> require_string(const Value& obj, const char* key, const char* what) {
  OSPREY_ASSIGN_OR_RETURN(const Value* v, require(obj, key, what));
  if (!v->IsString())
    return invalid_argument(what, ": field '", key, "' must be a str, got ", to_json(*v));
  return std::string(v->GetString(), v->GetStringLength());
}

// An integer in [lo, hi]; `fallback` when absent, if given.
Result<int64_t> int_in(const Value& obj, const char* key, int64_t lo, int64_t hi, const char* what,
                       std::optional<int64_t> fallback = std::nullopt) {
  if (fallback && !obj.HasMember(key)) return *fallback;
  OSPREY_ASSIGN_OR_RETURN(const Value* v, require(obj, key, what));
  if (!v->IsInt64() && !v->IsUint64())
    return invalid_argument(what, ": field '", key, "' must be an integer, got ", to_json(*v));
  if (v->IsUint64() && !v->IsInt64())
    return invalid_argument(what, ": field '", key, "' must be in [", lo, ", ", hi, "], got ",
                            v->GetUint64());
  const int64_t x = v->GetInt64();
  if (x < lo || x > hi)
    return invalid_argument(what, ": field '", key, "' must be in [", lo, ", ", hi, "], got ", x);
  return x;
}

Result<std::string> abs_path(const Value& obj, const char* key, const char* what) {
  OSPREY_ASSIGN_OR_RETURN(std::string text, require_string(obj, key, what));
  if (!fs::path(text).is_absolute())
    return invalid_argument(what, ": field '", key, "' must be an absolute path, got '", text, "'");
  return text;
}

Status check_file_name(const std::string& name, const std::string& what) {
  if (name.empty() || name.find('/') != std::string::npos || name.find('\0') != std::string::npos ||
      name == "." || name == "..")
    return invalid_argument(what, " '", name, "' cannot be used as a file name");
  return Status::Ok();
}

Status make_dirs(const std::string& dir, const std::string& what) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return invalid_argument(what, " ", dir, ": ", ec.message());
  return Status::Ok();
}

std::string shape_text(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

Result<InputDesc> parse_input(const std::string& name, const Value& spec) {
  OSPREY_RETURN_IF_ERROR(check_file_name(name, "load: input name"));
  const std::string where = "load: input '" + name + "'";
  if (!spec.IsObject()) return invalid_argument(where, " must be an object with dtype and shape");
  OSPREY_ASSIGN_OR_RETURN(std::string dtype, require_string(spec, "dtype", where.c_str()));
  InputDesc in;
  in.name = name;
  bool known = false;
  for (const char* d : kDtypes) known |= dtype == d;
  if (!known || !dtype_from_name(dtype, &in.dtype)) {
    std::string list;
    for (const char* d : kDtypes) list += (list.empty() ? "'" : ", '") + std::string(d) + "'";
    return invalid_argument(where, ": dtype '", dtype, "' is not one of [", list, "]");
  }
  OSPREY_ASSIGN_OR_RETURN(const Value* shape, require(spec, "shape", where.c_str()));
  if (!shape->IsArray())
    return invalid_argument(where, ": field 'shape' must be a list, got ", to_json(*shape));
  for (const auto& d : shape->GetArray()) {
    if (!d.IsInt64() || d.GetInt64() < 1 || d.GetInt64() > kAdapterMaxDim)
      return invalid_argument(where, ": shape must be a list of positive integers, got ",
                              to_json(*shape));
    in.shape.push_back(d.GetInt64());
  }
  in.source = "load request";
  return in;
}

// load's fields, checked in adapter_common.parse_load's order.
Result<LoadRequest> parse_load(const Value& req) {
  const char* what = "load";
  LoadRequest r;
  OSPREY_ASSIGN_OR_RETURN(r.model, abs_path(req, "model", what));
  std::error_code ec;
  if (!fs::is_regular_file(r.model, ec))
    return invalid_argument("load: model file not found: ", r.model);
  OSPREY_ASSIGN_OR_RETURN(int64_t threads, int_in(req, "threads", 1, kAdapterMaxThreads, what));
  r.threads = static_cast<int>(threads);
  OSPREY_ASSIGN_OR_RETURN(r.precision, require_string(req, "precision", what));
  if (r.precision != "fp32" && r.precision != "fast")
    return invalid_argument("load: precision must be one of ['fp32', 'fast'], got '", r.precision,
                            "'");
  OSPREY_ASSIGN_OR_RETURN(r.batch, int_in(req, "batch", 1, kAdapterMaxDim, what, 1));
  OSPREY_ASSIGN_OR_RETURN(const Value* inputs, require(req, "inputs", what));
  if (!inputs->IsObject())
    return invalid_argument("load: field 'inputs' must be a dict, got ", to_json(*inputs));
  if (inputs->MemberCount() == 0)
    return invalid_argument("load: 'inputs' must name at least one input");
  for (const auto& m : inputs->GetObject()) {
    OSPREY_ASSIGN_OR_RETURN(
        InputDesc in,
        parse_input(std::string(m.name.GetString(), m.name.GetStringLength()), m.value));
    r.inputs.push_back(std::move(in));
  }
  OSPREY_ASSIGN_OR_RETURN(r.work_dir, abs_path(req, "work_dir", what));
  OSPREY_RETURN_IF_ERROR(make_dirs(r.work_dir, "load: cannot create work_dir"));
  if (auto it = req.FindMember("options"); it != req.MemberEnd()) {
    if (!it->value.IsObject())
      return invalid_argument("load: 'options' must be an object, got ", to_json(it->value));
    r.options_json = to_json(it->value);
  }
  if (auto it = req.FindMember("pin_threads"); it != req.MemberEnd()) {
    if (!it->value.IsBool())
      return invalid_argument("load: field 'pin_threads' must be true or false, got ",
                              to_json(it->value));
    r.pin_threads = it->value.GetBool();
  }
  return r;
}

// Reads the header of <inputs_dir>/<name>.npy for every declared input and checks its dtype and
// shape against the load request (adapter_common.load_inputs).
Status check_inputs(const std::string& inputs_dir, const LoadRequest& loaded) {
  for (const InputDesc& in : loaded.inputs) {
    const std::string path = inputs_dir + "/" + in.name + ".npy";
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return invalid_argument("input file not found: ", path);
    std::ifstream f(path, std::ios::binary);
    std::string head(size_t{1} << 17, '\0');
    f.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(f.gcount()));
    auto h = parse_npy_header(head);
    if (!h.ok()) return invalid_argument("cannot read ", path, " as .npy: ", h.status().message());
    if (h->dtype != in.dtype || h->shape != in.shape)
      return invalid_argument("input '", in.name, "' in ", path, " is ", dtype_name(h->dtype),
                              shape_text(h->shape), ", load declared ", dtype_name(in.dtype),
                              shape_text(in.shape));
  }
  return Status::Ok();
}

// ---- the commands -----------------------------------------------------------------------

const HelloReply& availability(AdapterServer::State& st) {
  if (!st.hello) {
    auto h = st.runner->hello();
    if (h.ok()) {
      st.hello = *h;
    } else {
      st.hello.emplace();
      st.hello->framework = st.runner->name();
      st.hello->reason = h.status().message();
    }
  }
  return *st.hello;
}

std::string cmd_hello(AdapterServer::State& st) {
  const HelloReply& h = availability(st);
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("ok"), w.Bool(true);
  w.Key("framework"), w.String(st.runner->name().c_str());
  w.Key("pin_threads"), w.Bool(h.pins_threads);
  w.Key("pin_threads_note"), w.String(h.pin_threads_note.c_str());
  if (h.available) {
    w.Key("version"), w.String(h.version.c_str());
    w.Key("available"), w.Bool(true);
  } else {
    w.Key("available"), w.Bool(false);
    w.Key("reason"), w.String(h.reason.c_str());
    if (!h.version.empty()) w.Key("version"), w.String(h.version.c_str());
  }
  w.EndObject();
  return sb.GetString();
}

Result<std::string> cmd_load(AdapterServer::State& st, const Value& req) {
  const HelloReply& h = availability(st);
  const std::string& fw = st.runner->name();
  if (!h.available) return failed_precondition(fw, " not available: ", h.reason);
  OSPREY_ASSIGN_OR_RETURN(LoadRequest r, parse_load(req));
  rapidjson::Document options;
  options.Parse(r.options_json.c_str());
  if (options.IsObject() && options.MemberCount() > 0)  // this adapter has no load options
    return invalid_argument("load: unknown option '", options.MemberBegin()->name.GetString(),
                            "' for ", fw, " (known: none)");
  if (r.pin_threads && !h.pins_threads)
    return invalid_argument("thread pinning is not supported by ", fw, ": ", h.pin_threads_note);
  st.loaded.reset();
  OSPREY_ASSIGN_OR_RETURN(LoadReply reply, st.runner->load(r));
  st.loaded = std::move(r);
  rapidjson::Document settings;
  settings.Parse(reply.settings_json.c_str());
  if (settings.HasParseError() || !settings.IsObject())
    return internal_error(fw,
                          " load gave settings that are not a JSON object: ", reply.settings_json);
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("ok"), w.Bool(true);
  w.Key("load_ms"),
      w.Double(std::isfinite(reply.load_ms) ? std::round(reply.load_ms * 1000.0) / 1000.0 : 0.0);
  w.Key("settings"), settings.Accept(w);
  w.Key("precision_used"), w.String(reply.precision_used.c_str());
  w.Key("notes"), w.String(reply.notes.c_str());
  w.EndObject();
  return std::string(sb.GetString());
}

Result<const LoadRequest*> loaded(const AdapterServer::State& st, const char* cmd) {
  if (!st.loaded)
    return failed_precondition(cmd, ": no model loaded (send a successful load first)");
  return &*st.loaded;
}

Result<std::string> cmd_run(AdapterServer::State& st, const Value& req) {
  OSPREY_ASSIGN_OR_RETURN(const LoadRequest* model, loaded(st, "run"));
  OSPREY_ASSIGN_OR_RETURN(std::string inputs_dir, abs_path(req, "inputs_dir", "run"));
  OSPREY_ASSIGN_OR_RETURN(int64_t iterations,
                          int_in(req, "iterations", 1, kAdapterMaxIterations, "run"));
  OSPREY_ASSIGN_OR_RETURN(int64_t warmup,
                          int_in(req, "warmup", 0, kAdapterMaxIterations, "run", 0));
  OSPREY_RETURN_IF_ERROR(check_inputs(inputs_dir, *model));
  OSPREY_ASSIGN_OR_RETURN(RunReply r, st.runner->run(inputs_dir, static_cast<int>(iterations),
                                                     static_cast<int>(warmup)));
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("ok"), w.Bool(true);
  w.Key("latencies_us"), w.StartArray();
  for (double us : r.latencies_us) w.Double(std::isfinite(us) ? us : 0.0);
  w.EndArray();
  w.Key("rss_bytes"), w.Int64(r.rss_bytes);
  w.Key("peak_rss_bytes"), w.Int64(r.peak_rss_bytes);
  w.EndObject();
  return std::string(sb.GetString());
}

Result<std::string> cmd_outputs(AdapterServer::State& st, const Value& req) {
  OSPREY_ASSIGN_OR_RETURN(const LoadRequest* model, loaded(st, "outputs"));
  OSPREY_ASSIGN_OR_RETURN(std::string inputs_dir, abs_path(req, "inputs_dir", "outputs"));
  OSPREY_ASSIGN_OR_RETURN(std::string out_dir, abs_path(req, "out_dir", "outputs"));
  OSPREY_RETURN_IF_ERROR(check_inputs(inputs_dir, *model));
  OSPREY_RETURN_IF_ERROR(make_dirs(out_dir, "outputs: cannot create out_dir"));
  OSPREY_ASSIGN_OR_RETURN(std::vector<std::string> names, st.runner->outputs(inputs_dir, out_dir));
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("ok"), w.Bool(true);
  w.Key("outputs"), w.StartArray();
  for (const auto& n : names) w.String(n.c_str());
  w.EndArray();
  w.EndObject();
  return std::string(sb.GetString());
}

}  // namespace

AdapterAnswer AdapterServer::handle_line(const std::string& line) {
  rapidjson::Document req;
  req.Parse(line.c_str(), line.size());
  if (req.HasParseError())
    return {error_answer(str_cat("malformed command: not JSON (",
                                 rapidjson::GetParseError_En(req.GetParseError()), " at column ",
                                 req.GetErrorOffset() + 1, ")"))};
  if (!req.IsObject()) return {error_answer("malformed command: expected a JSON object")};
  auto cmd_it = req.FindMember("cmd");
  const std::string cmd = cmd_it != req.MemberEnd() && cmd_it->value.IsString()
                              ? std::string(cmd_it->value.GetString())
                              : std::string();
  if (cmd == "quit") return {"{\"ok\":true}", true};
  Result<std::string> answer = [&]() -> Result<std::string> {
    if (cmd == "hello") return cmd_hello(state_);
    if (cmd == "load") return cmd_load(state_, req);
    if (cmd == "run") return cmd_run(state_, req);
    if (cmd == "outputs") return cmd_outputs(state_, req);
    const std::string given = cmd_it == req.MemberEnd() ? "null" : to_json(cmd_it->value);
    return invalid_argument("unknown cmd ", given, ": expected hello, load, run, outputs or quit");
  }();
  if (!answer.ok()) return {error_answer(answer.status().message())};
  return {std::move(answer).value()};
}

Status serve_adapter(FrameworkRunner& runner, std::istream& in, int out_fd) {
  AdapterServer server(runner);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    AdapterAnswer a = server.handle_line(line);
    const std::string text = a.line + "\n";
    size_t sent = 0;
    while (sent < text.size()) {
      const ssize_t n = write(out_fd, text.data() + sent, text.size() - sent);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        return unavailable("cannot write the answer to '", line.substr(0, 40),
                           "': ", n < 0 ? std::strerror(errno) : "nothing written");
      sent += static_cast<size_t>(n);
    }
    if (a.quit) break;
  }
  return Status::Ok();
}

}  // namespace osprey::bench
