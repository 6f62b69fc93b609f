// The protocol-level request and response the router works on. The socket server fills these
// from HTTP/1.1 messages; tests build them directly, so every route is testable without sockets.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace osprey::server::http {

// The binary tensor data extension: the length of the JSON part of a body whose tail holds
// raw tensor bytes.
inline constexpr const char* kInferHeaderContentLength = "Inference-Header-Content-Length";

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // origin-form: "/v2/models/m/infer?x=y"
  // Raw value of the Inference-Header-Content-Length header, when present.
  std::optional<std::string> inference_header_length;
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string content_type;  // "" = no Content-Type header (empty bodies)
  // Set when the body is JSON followed by binary output data: the JSON's length.
  std::optional<size_t> inference_header_length;
  std::string body;
};

// Called exactly once per request, from any thread.
using Responder = std::function<void(HttpResponse)>;
// A request handler: the KServe router, or the metrics endpoint.
using HttpHandler = std::function<void(HttpRequest, Responder)>;

}  // namespace osprey::server::http
