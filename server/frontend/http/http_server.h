// HTTP/1.1 server (Boost.Beast over Asio) that feeds requests to an HttpHandler: the KServe
// Router on the inference port, make_metrics_handler() on the metrics port.
//
// N I/O threads serve all connections; a connection handles one request at a time (pipelined
// requests wait in its buffer), so responses keep their order. The handler may answer later from
// any thread (inference completes on a server thread): no I/O thread waits for inference.
// Limits: bodies over max_body_bytes get 413 without being read, headers over max_header_bytes
// get 431, a connection idle for idle_timeout is closed.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "frontend/http/http_types.h"
#include "osprey/status.h"

namespace osprey::server::http {

struct HttpServerOptions {
  std::string address = "0.0.0.0";
  uint16_t port = 8000;  // 0 = any free port (see HttpServer::port())
  int io_threads = 2;
  uint64_t max_body_bytes = uint64_t{256} << 20;  // ServerLimits::max_request_bytes
  uint32_t max_header_bytes = 16 * 1024;
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(60);
};

class HttpServer {
 public:
  // Binds, listens and starts the I/O threads. Bind errors (port in use, bad address) come back
  // as kUnavailable / kInvalidArgument naming the address.
  static Result<std::unique_ptr<HttpServer>> start(const HttpServerOptions& options,
                                                   HttpHandler handler);
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  uint16_t port() const;  // the bound port
  // Graceful: stops accepting, closes idle connections, lets in-flight requests write their
  // responses, then joins the I/O threads. Not to be called from a handler.
  void stop();

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace osprey::server::http
