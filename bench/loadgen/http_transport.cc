// The HTTP/REST side of the KServe v2 protocol, as a client.
#include <boost/beast/http/field.hpp>

#include "http_connection.h"
#include "transport.h"

namespace osprey::loadgen {
namespace {

using Clock = std::chrono::steady_clock;
namespace http = boost::beast::http;

int64_t since_ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
}

// The "error" member of a KServe error body, or the status line.
std::string error_text(const HttpResponse& r) {
  const std::string& b = r.body();
  const size_t key = b.find("\"error\"");
  if (key != std::string::npos) {
    const size_t open = b.find('"', b.find(':', key) + 1);
    const size_t close = open == std::string::npos ? open : b.find('"', open + 1);
    if (close != std::string::npos) return b.substr(open + 1, close - open - 1);
  }
  return "HTTP " + std::to_string(r.result_int());
}

class HttpWorker : public InferWorker {
 public:
  HttpWorker(const TransportOptions& o, const HttpRequest& request)
      : connection_(o.endpoint, std::chrono::milliseconds(static_cast<int64_t>(o.request_timeout_s * 1000))),
        request_(request) {}

  InferOutcome infer() override {
    InferOutcome out;
    auto response = connection_.exchange(request_, &out.send_ns);
    const auto t = Clock::now();
    if (!response.ok()) {
      out.ok = false;
      out.error = response.status().message();
    } else if (response->result() != http::status::ok) {
      out.ok = false;
      out.error = "HTTP " + std::to_string(response->result_int()) + ": " + error_text(*response);
    }
    out.recv_ns = since_ns(t);
    return out;
  }

 private:
  HttpConnection connection_;
  const HttpRequest& request_;
};

class HttpTransport : public Transport {
 public:
  explicit HttpTransport(TransportOptions o)
      : options_(std::move(o)),
        control_(options_.endpoint, std::chrono::milliseconds(static_cast<int64_t>(options_.request_timeout_s * 1000))) {
    model_path_ = "/v2/models/" + options_.model;
    if (!options_.version.empty()) model_path_ += "/versions/" + options_.version;
  }

  Result<ModelInfo> metadata() override {
    OSPREY_ASSIGN_OR_RETURN(std::string body, get(model_path_, "model metadata"));
    return parse_metadata_json(body);
  }

  Result<ServerStats> statistics() override {
    OSPREY_ASSIGN_OR_RETURN(std::string body, get(model_path_ + "/stats", "model statistics"));
    return parse_stats_json(body, options_.model);
  }

  Status prepare(const std::vector<InputTensor>& inputs) override {
    request_ = make_http_request(options_.endpoint, true, model_path_ + "/infer");
    HttpBody body;
    if (options_.http_json) {
      OSPREY_ASSIGN_OR_RETURN(body, encode_json_body(inputs));
      request_.set(http::field::content_type, "application/json");
    } else {
      body = encode_binary_body(inputs);
      request_.set(http::field::content_type, "application/octet-stream");
      request_.set("Inference-Header-Content-Length", std::to_string(body.json_header_size));
    }
    request_.body() = std::move(body.body);
    request_.prepare_payload();
    return Status();
  }

  Result<std::unique_ptr<InferWorker>> make_worker() override {
    return std::unique_ptr<InferWorker>(new HttpWorker(options_, request_));
  }

 private:
  Result<std::string> get(const std::string& target, const char* what) {
    OSPREY_ASSIGN_OR_RETURN(HttpResponse r, control_.exchange(make_http_request(options_.endpoint, false, target)));
    if (r.result() == http::status::not_found)
      return not_found(what, " of '", options_.model, "': ", error_text(r), " (unknown model?)");
    if (r.result() != http::status::ok)
      return unavailable(what, " of '", options_.model, "': HTTP ", r.result_int(), ": ", error_text(r));
    return std::move(r.body());
  }

  TransportOptions options_;
  HttpConnection control_;
  std::string model_path_;
  HttpRequest request_;
};

}  // namespace

Result<std::unique_ptr<Transport>> make_http_transport(const TransportOptions& options) {
  return std::unique_ptr<Transport>(new HttpTransport(options));
}

Result<Endpoint> parse_endpoint(const std::string& url, Protocol protocol) {
  std::string s = url;
  for (const char* scheme : {"http://", "grpc://"})
    if (s.rfind(scheme, 0) == 0) s = s.substr(std::string(scheme).size());
  while (!s.empty() && s.back() == '/') s.pop_back();
  Endpoint e{s, protocol == Protocol::kGrpc ? 8001 : 8000};
  const size_t colon = s.rfind(':');
  if (colon != std::string::npos) {
    e.host = s.substr(0, colon);
    const std::string port = s.substr(colon + 1);
    char* end = nullptr;
    const long p = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || p < 1 || p > 65535)
      return invalid_argument("--url: port '", port, "' in '", url, "' is not 1..65535");
    e.port = static_cast<int>(p);
  }
  if (e.host.empty()) return invalid_argument("--url: no host in '", url, "'");
  return e;
}

}  // namespace osprey::loadgen
