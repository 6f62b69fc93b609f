// One HTTP/1.1 keep-alive connection (Boost.Beast), with a timeout on every exchange. Used by
// the HTTP transport: one connection per worker, reconnected after a failure.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "osprey/status.h"
#include "transport.h"

namespace osprey::loadgen {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

class HttpConnection {
 public:
  HttpConnection(Endpoint endpoint, std::chrono::milliseconds timeout);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Sends `request` (connecting first when needed) and reads the response. `write_ns` gets the
  // time spent writing. Errors are kUnavailable with the cause ("connection refused", "timed
  // out after N ms", ...); the connection is then closed and reopened by the next call.
  Result<HttpResponse> exchange(const HttpRequest& request, int64_t* write_ns = nullptr);

 private:
  Status connect();
  void close();

  Endpoint endpoint_;
  std::chrono::milliseconds timeout_;
  boost::asio::io_context ioc_;
  std::optional<boost::beast::tcp_stream> stream_;
  boost::beast::flat_buffer buffer_;
};

// A GET/POST request for `target` with Host and keep-alive set.
HttpRequest make_http_request(const Endpoint& endpoint, bool post, const std::string& target);

}  // namespace osprey::loadgen
