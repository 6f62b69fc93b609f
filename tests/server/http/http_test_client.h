// A small synchronous Beast HTTP/1.1 client for the socket tests.
#pragma once

#include <utility>  // before Asio: Boost 1.74 awaitable.hpp uses std::exchange

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <map>
#include <string>

namespace osprey::server::http::testing {

using Response = boost::beast::http::response<boost::beast::http::string_body>;

class TestClient {
 public:
  explicit TestClient(uint16_t port);

  Response request(const std::string& method, const std::string& target, std::string body = "",
                   const std::map<std::string, std::string>& headers = {});
  void write_raw(const std::string& bytes);
  Response read_response();
  // True when the server closed the connection (the next read sees EOF or a reset).
  bool closed_by_server();

 private:
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

}  // namespace osprey::server::http::testing
