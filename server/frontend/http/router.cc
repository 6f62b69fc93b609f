#include "frontend/http/router.h"

#include <rapidjson/document.h>

#include <utility>
#include <vector>

#include "frontend/http/infer_codec.h"
#include "frontend/http/json_params.h"
#include "frontend/http/metadata_json.h"
#include "frontend/http/url_path.h"
#include "osprey_server/model_config.pb.h"

namespace osprey::server::http {
namespace {

constexpr const char* kJson = "application/json";

HttpResponse json_response(std::string body) {
  HttpResponse r;
  r.content_type = kJson;
  r.body = std::move(body);
  return r;
}

HttpResponse empty_response(int status) {
  HttpResponse r;
  r.status = status;
  return r;
}

HttpResponse method_not_allowed(const HttpRequest& req, const char* allowed) {
  HttpResponse r = json_response(error_json(
      str_cat("method ", req.method, " is not allowed on this endpoint; use ", allowed)));
  r.status = 405;
  return r;
}

HttpResponse not_found_route(const HttpRequest& req) {
  HttpResponse r = json_response(error_json(
      str_cat("no endpoint for ", req.method, " ", req.target.substr(0, 256))));
  r.status = 404;
  return r;
}

// Parses an optional JSON object body of the repository endpoints.
Result<rapidjson::Document> parse_object_body(const std::string& body, const char* what) {
  rapidjson::Document doc;
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) {
    doc.SetObject();
    return doc;
  }
  doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (doc.HasParseError())
    return invalid_argument("malformed JSON in ", what, " request at offset ", doc.GetErrorOffset());
  if (!doc.IsObject()) return invalid_argument(what, " request body must be a JSON object");
  return doc;
}

// One known load parameter: "config" (a JSON string) or "file:<path>" (base64 of the bytes).
Status add_load_parameter(const std::string& key, const rapidjson::Value& value,
                          ModelLoadOptions* options) {
  if (key == "config") {
    if (!value.IsString())
      return invalid_argument(
          "load parameter 'config' must be a string holding the model configuration as JSON");
    options->config = std::string(value.GetString(), value.GetStringLength());
    return Status::Ok();
  }
  if (!value.IsString())
    return invalid_argument("load parameter '", key, "' must be a base64 string");
  auto bytes = decode_base64(std::string_view(value.GetString(), value.GetStringLength()));
  if (!bytes.ok()) return bytes.status().with_context(str_cat("load parameter '", key, "'"));
  return add_load_file(key, std::move(bytes).value(), options);
}

// The parts of /v2/models/{m}[/versions/{v}][/action].
struct ModelRoute {
  std::string model;
  std::string version;
  std::string action;  // "", "ready", "infer", "stats", "config"
};

// Returns false when the segments are not a model route (404).
bool match_model_route(std::vector<std::string>& s, ModelRoute* r) {
  // s = {"v2", "models", m, ...}
  size_t i = 3;
  r->model = std::move(s[2]);
  if (s.size() >= 5 && s[3] == "versions") {
    r->version = std::move(s[4]);
    i = 5;
  }
  if (s.size() == i) return true;
  if (s.size() != i + 1) return false;
  r->action = std::move(s[i]);
  return r->action == "ready" || r->action == "infer" || r->action == "stats" ||
         r->action == "config";
}

}  // namespace

int http_status_of(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kUnimplemented:
    case StatusCode::kResourceExhausted:
    case StatusCode::kFailedPrecondition: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kUnavailable: return 503;
    case StatusCode::kInternal: return 500;
  }
  return 500;
}

HttpResponse error_response(const Status& status) {
  HttpResponse r = json_response(error_json(status.message()));
  r.status = http_status_of(status.code());
  return r;
}

namespace {

class RouteHandler {
 public:
  RouteHandler(Server& server, HttpRequest& req, Responder& respond)
      : server_(server), req_(req), respond_(respond) {}

  void run(std::vector<std::string> s) {
    if (s.empty() || s[0] != "v2") return respond_(not_found_route(req_));
    if (s.size() == 1) {
      if (!is("GET")) return respond_(method_not_allowed(req_, "GET"));
      return respond_(json_response(server_metadata_json(server_.metadata())));
    }
    if (s.size() == 3 && s[1] == "health" && (s[2] == "live" || s[2] == "ready")) {
      if (!is("GET")) return respond_(method_not_allowed(req_, "GET"));
      bool ok = s[2] == "live" ? server_.live() : server_.ready();
      return respond_(empty_response(ok ? 200 : 400));
    }
    if (s.size() == 3 && s[1] == "models" && s[2] == "stats") {
      if (!is("GET")) return respond_(method_not_allowed(req_, "GET"));
      return stats("", "");
    }
    if (s.size() >= 3 && s[1] == "models") {
      ModelRoute r;
      if (!match_model_route(s, &r)) return respond_(not_found_route(req_));
      return model(r);
    }
    if (s.size() == 3 && s[1] == "repository" && s[2] == "index") {
      if (!is("POST")) return respond_(method_not_allowed(req_, "POST"));
      return repository_index();
    }
    if (s.size() == 5 && s[1] == "repository" && s[2] == "models" &&
        (s[4] == "load" || s[4] == "unload")) {
      if (!is("POST")) return respond_(method_not_allowed(req_, "POST"));
      return load_unload(s[3], s[4] == "load");
    }
    respond_(not_found_route(req_));
  }

 private:
  bool is(const char* method) const { return req_.method == method; }

  void model(const ModelRoute& r) {
    const char* method = r.action == "infer" ? "POST" : "GET";
    if (!is(method)) return respond_(method_not_allowed(req_, method));
    Status valid = check_model_name(r.model);
    if (valid.ok() && !r.version.empty()) valid = check_model_version(r.version);
    if (!valid.ok()) return respond_(error_response(valid));
    if (r.action.empty()) {
      auto md = server_.model_metadata(r.model, r.version);
      if (!md.ok()) return respond_(error_response(md.status()));
      return respond_(json_response(model_metadata_json(*md)));
    }
    if (r.action == "ready") {
      auto ready = server_.model_ready(r.model, r.version);
      return respond_(empty_response(ready.ok() && *ready ? 200 : 400));
    }
    if (r.action == "stats") return stats(r.model, r.version);
    if (r.action == "config") return config(r.model, r.version);
    infer(r);
  }

  void stats(const std::string& model, const std::string& version) {
    auto s = server_.statistics(model, version);
    if (!s.ok()) return respond_(error_response(s.status()));
    respond_(json_response(statistics_json(*s)));
  }

  void config(const std::string& model, const std::string& version) {
    inference::ModelConfig cfg;
    Status st = server_.model_config(model, version, &cfg);
    if (!st.ok()) return respond_(error_response(st));
    auto json = model_config_json(cfg);
    if (!json.ok()) return respond_(error_response(json.status()));
    respond_(json_response(std::move(json).value()));
  }

  void repository_index() {
    auto doc = parse_object_body(req_.body, "repository index");
    if (!doc.ok()) return respond_(error_response(doc.status()));
    bool ready_only = false;
    if (const rapidjson::Value* ready = find_member(*doc, "ready")) {
      if (!ready->IsBool())
        return respond_(error_response(invalid_argument("repository index 'ready' must be a bool")));
      ready_only = ready->GetBool();
    }
    respond_(json_response(repository_index_json(server_.repository_index(ready_only))));
  }

  void load_unload(const std::string& model, bool load) {
    Status st = check_model_name(model);
    if (!st.ok()) return respond_(error_response(st));
    auto doc = parse_object_body(req_.body, load ? "load" : "unload");
    if (!doc.ok()) return respond_(error_response(doc.status()));
    // Triton's clients send {"parameters": {"unload_dependents": false}} on unload. Osprey has
    // no ensembles, so a model has no dependents and the flag changes nothing. On load,
    // {"parameters": {"config": "<model config as JSON>"}} overrides config.pbtxt.
    ModelLoadOptions options;
    if (const rapidjson::Value* p = find_member(*doc, "parameters"); p) {
      if (!p->IsObject())
        return respond_(error_response(invalid_argument("'parameters' must be an object")));
      for (const auto& m : p->GetObject()) {
        const std::string key(m.name.GetString(), m.name.GetStringLength());
        if (!load) {
          if (key == "unload_dependents" && m.value.IsBool()) continue;
          return respond_(error_response(invalid_argument(
              "unknown unload parameter '", key, "' (known: \"unload_dependents\", a bool)")));
        }
        if (Status k = check_load_parameter_key(key); !k.ok()) return respond_(error_response(k));
        if (Status v = add_load_parameter(key, m.value, &options); !v.ok())
          return respond_(error_response(v));
      }
    }
    st = load ? server_.load_model(model, options) : server_.unload_model(model);
    if (!st.ok()) return respond_(error_response(st));
    respond_(empty_response(200));
  }

  void infer(const ModelRoute& r) {
    std::optional<uint64_t> json_length;
    if (req_.inference_header_length) {
      auto n = parse_header_length(*req_.inference_header_length);
      if (!n.ok()) return respond_(error_response(n.status()));
      json_length = *n;
    }
    auto decoded = decode_infer_request(std::move(req_.body), json_length,
                                        server_.limits().max_tensor_elements);
    if (!decoded.ok())
      return respond_(error_response(decoded.status().with_context(
          str_cat("model '", r.model, "'"))));
    InferRequest request = std::move(decoded).value();
    request.model_name = r.model;
    request.model_version = r.version;
    auto encoding = output_encoding_of(request);
    if (!encoding.ok()) return respond_(error_response(encoding.status()));
    server_.infer_async(std::move(request),
                        [respond = std::move(respond_), enc = std::move(encoding).value()](
                            Result<InferResponse> result) {
                          if (!result.ok()) return respond(error_response(result.status()));
                          auto encoded = encode_infer_response(*result, enc);
                          if (!encoded.ok()) return respond(error_response(encoded.status()));
                          HttpResponse resp;
                          resp.content_type =
                              encoded->json_length ? "application/octet-stream" : kJson;
                          resp.inference_header_length = encoded->json_length;
                          resp.body = std::move(encoded->body);
                          respond(std::move(resp));
                        });
  }

  Server& server_;
  HttpRequest& req_;
  Responder& respond_;
};

}  // namespace

void Router::handle(HttpRequest request, Responder respond) {
  auto segments = split_target(request.target);
  if (!segments.ok()) return respond(error_response(segments.status()));
  RouteHandler(server_, request, respond).run(std::move(segments).value());
}

HttpHandler make_metrics_handler(Server& server) {
  return [&server](HttpRequest req, Responder respond) {
    auto segments = split_target(req.target);
    if (!segments.ok()) return respond(error_response(segments.status()));
    if (segments->size() != 1 || (*segments)[0] != "metrics")
      return respond(not_found_route(req));
    if (req.method != "GET") return respond(method_not_allowed(req, "GET"));
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4";
    r.body = server.prometheus_metrics();
    respond(std::move(r));
  };
}

}  // namespace osprey::server::http
