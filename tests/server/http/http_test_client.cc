#include "http_test_client.h"

namespace osprey::server::http::testing {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;

TestClient::TestClient(uint16_t port) : socket_(ioc_) {
  socket_.connect({net::ip::make_address("127.0.0.1"), port});
}

Response TestClient::request(const std::string& method, const std::string& target,
                             std::string body, const std::map<std::string, std::string>& headers) {
  bhttp::request<bhttp::string_body> req(bhttp::string_to_verb(method), target, 11);
  req.set(bhttp::field::host, "localhost");
  for (const auto& [k, v] : headers) req.set(k, v);
  req.body() = std::move(body);
  req.prepare_payload();
  bhttp::write(socket_, req);
  return read_response();
}

void TestClient::write_raw(const std::string& bytes) { net::write(socket_, net::buffer(bytes)); }

Response TestClient::read_response() {
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(1ull << 30);
  bhttp::read(socket_, buffer_, parser);
  return parser.release();
}

bool TestClient::closed_by_server() {
  char c;
  boost::system::error_code ec;
  socket_.read_some(net::buffer(&c, 1), ec);
  return ec == net::error::eof || ec == net::error::connection_reset;
}

}  // namespace osprey::server::http::testing
