#include "http_connection.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace osprey::loadgen {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Clock = std::chrono::steady_clock;

namespace {

// Runs the io_context until the started operation finishes (tcp_stream's timeout cancels it).
void run(asio::io_context& ioc) {
  ioc.restart();
  ioc.run();
}

std::string describe(const beast::error_code& ec, std::chrono::milliseconds timeout) {
  if (ec == beast::error::timeout) return "timed out after " + std::to_string(timeout.count()) + " ms";
  return ec.message();
}

}  // namespace

HttpConnection::HttpConnection(Endpoint endpoint, std::chrono::milliseconds timeout)
    : endpoint_(std::move(endpoint)), timeout_(timeout) {
  // Beast receives at most the buffer's free capacity per read and the body parser drains the
  // buffer, so without a reservation large responses arrive 512 bytes per system call.
  buffer_.reserve(64 * 1024);
}

HttpConnection::~HttpConnection() { close(); }

void HttpConnection::close() {
  if (!stream_) return;
  beast::error_code ignored;
  stream_->socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  stream_.reset();
  buffer_.clear();
}

Status HttpConnection::connect() {
  const std::string where = endpoint_.host + ":" + std::to_string(endpoint_.port);
  asio::ip::tcp::resolver resolver(ioc_);
  beast::error_code ec;
  const auto results = resolver.resolve(endpoint_.host, std::to_string(endpoint_.port), ec);
  if (ec) return unavailable("cannot resolve ", where, ": ", ec.message());
  stream_.emplace(ioc_);
  stream_->expires_after(timeout_);
  stream_->async_connect(results, [&](beast::error_code e, const auto&) { ec = e; });
  run(ioc_);
  if (ec) {
    stream_.reset();
    return unavailable("cannot connect to ", where, ": ", describe(ec, timeout_));
  }
  stream_->socket().set_option(asio::ip::tcp::no_delay(true), ec);
  return Status();
}

Result<HttpResponse> HttpConnection::exchange(const HttpRequest& request, int64_t* write_ns) {
  if (!stream_) OSPREY_RETURN_IF_ERROR(connect());
  beast::error_code ec;
  const auto t0 = Clock::now();
  stream_->expires_after(timeout_);
  http::async_write(*stream_, request, [&](beast::error_code e, size_t) { ec = e; });
  run(ioc_);
  if (write_ns) *write_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
  if (ec) {
    close();
    return unavailable("sending the request failed: ", describe(ec, timeout_));
  }
  HttpResponse response;
  stream_->expires_after(timeout_);
  http::async_read(*stream_, buffer_, response, [&](beast::error_code e, size_t) { ec = e; });
  run(ioc_);
  if (ec) {
    close();
    return unavailable("reading the response failed: ", describe(ec, timeout_));
  }
  if (!response.keep_alive()) close();
  return response;
}

HttpRequest make_http_request(const Endpoint& endpoint, bool post, const std::string& target) {
  HttpRequest req(post ? http::verb::post : http::verb::get, target, 11);
  req.set(http::field::host, endpoint.host + ":" + std::to_string(endpoint.port));
  req.set(http::field::user_agent, "osprey-perf");
  req.keep_alive(true);
  return req;
}

}  // namespace osprey::loadgen
