// The KServe v2 REST routes: method + target + body -> status + body, calling the Server. Pure
// (no sockets): the HTTP server feeds it parsed requests, tests call it directly.
//
// Status codes follow Triton: errors map by code (kInvalidArgument, kUnimplemented,
// kResourceExhausted, kFailedPrecondition -> 400; kNotFound -> 404; kUnavailable -> 503;
// kInternal -> 500) with a {"error": "..."} body; an unknown route is 404 and a known route with
// the wrong method 405. The health and model ready endpoints answer 200 when ready and 400 with
// an empty body otherwise (an unknown model is "not ready": 400), as Triton's HTTP server does.
#pragma once

#include "api/server.h"
#include "frontend/http/http_types.h"

namespace osprey::server::http {

int http_status_of(StatusCode code);
HttpResponse error_response(const Status& status);

class Router {
 public:
  explicit Router(Server& server) : server_(server) {}

  // Answers through `respond`, exactly once: immediately for every route but infer, whose
  // response is sent from the Server's completion callback.
  void handle(HttpRequest request, Responder respond);

 private:
  Server& server_;
};

// The metrics port: GET /metrics answers Server::prometheus_metrics() as
// "text/plain; version=0.0.4"; anything else is 404 (405 for another method on /metrics).
HttpHandler make_metrics_handler(Server& server);

}  // namespace osprey::server::http
