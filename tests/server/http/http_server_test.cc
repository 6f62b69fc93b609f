// The Beast server on a free port with the Router over the FakeServer, driven by a real client.
#include "frontend/http/http_server.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <future>
#include <thread>

#include "fake_server.h"
#include "frontend/http/router.h"
#include "http_test_client.h"

namespace osprey::server::http {
namespace {

using testing::Response;
using testing::TestClient;

const std::string kGoodInfer =
    R"({"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[2],"data":[1.5,2]}]})";

class HttpServerTest : public ::testing::Test {
 protected:
  void start(HttpServerOptions options = {}) {
    options.address = "127.0.0.1";
    options.port = 0;
    auto s = HttpServer::start(options, [this](HttpRequest r, Responder done) {
      router_.handle(std::move(r), std::move(done));
    });
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    server_ = std::move(s).value();
    port_ = server_->port();
    ASSERT_NE(port_, 0);
  }
  static std::string error_of(const Response& r) {
    rapidjson::Document d;
    d.Parse(r.body().data(), r.body().size());
    return !d.HasParseError() && d.IsObject() && d.HasMember("error") ? d["error"].GetString() : "";
  }

  server::testing::FakeServer fake_;
  Router router_{fake_};
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
};

TEST_F(HttpServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  start();
  TestClient c(port_);
  for (int i = 0; i < 3; ++i) {
    Response r = c.request("GET", "/v2/health/ready");
    EXPECT_EQ(r.result_int(), 200);
    EXPECT_TRUE(r.keep_alive());
  }
  Response md = c.request("GET", "/v2");
  EXPECT_EQ(md.result_int(), 200);
  EXPECT_EQ(md[boost::beast::http::field::content_type], "application/json");
  Response infer = c.request("POST", "/v2/models/identity/infer", kGoodInfer);
  EXPECT_EQ(infer.result_int(), 200);
  EXPECT_NE(infer.body().find("OUTPUT0"), std::string::npos);
}

TEST_F(HttpServerTest, BinaryInferRoundTrip) {
  start();
  std::string json =
      R"({"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":8}}],)"
      R"("outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]})";
  float values[2] = {3.5f, -1.25f};
  std::string tail(reinterpret_cast<const char*>(values), 8);
  TestClient c(port_);
  Response r = c.request("POST", "/v2/models/identity/infer", json + tail,
                         {{"Inference-Header-Content-Length", std::to_string(json.size())}});
  ASSERT_EQ(r.result_int(), 200) << r.body();
  auto it = r.find("Inference-Header-Content-Length");
  ASSERT_NE(it, r.end());
  size_t n = std::stoul(std::string(it->value()));
  ASSERT_LE(n, r.body().size());
  EXPECT_EQ(r.body().substr(n), tail);
  EXPECT_NE(r.body().substr(0, n).find("\"binary_data_size\":8"), std::string::npos);
}

TEST_F(HttpServerTest, ErrorBodies) {
  start();
  TestClient c(port_);
  Response bad = c.request("POST", "/v2/models/identity/infer", "{nope");
  EXPECT_EQ(bad.result_int(), 400);
  EXPECT_NE(error_of(bad).find("malformed JSON"), std::string::npos);
  Response missing = c.request("POST", "/v2/models/nope/infer", kGoodInfer);
  EXPECT_EQ(missing.result_int(), 404);
  EXPECT_NE(error_of(missing).find("unknown model 'nope'"), std::string::npos);
  Response busy = c.request("POST", "/v2/models/busy/infer", kGoodInfer);
  EXPECT_EQ(busy.result_int(), 503);
  EXPECT_FALSE(error_of(busy).empty());
  Response not_ready = c.request("GET", "/v2/models/loading/ready");
  EXPECT_EQ(not_ready.result_int(), 400);
  EXPECT_TRUE(not_ready.body().empty());
  Response route = c.request("GET", "/nothing/here");
  EXPECT_EQ(route.result_int(), 404);
}

TEST_F(HttpServerTest, OversizedBodyIsRefusedWhileOtherConnectionsWork) {
  HttpServerOptions o;
  o.max_body_bytes = 1024;
  start(o);
  // A slow inference is in flight on connection B while A sends oversized requests.
  auto slow = std::async(std::launch::async, [&] {
    TestClient b(port_);
    return b.request("POST", "/v2/models/slow/infer", kGoodInfer);
  });
  {
    TestClient a(port_);  // declared length over the limit, body never sent
    a.write_raw("POST /v2/models/identity/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n"
                "Expect: 100-continue\r\n\r\n");
    Response r = a.read_response();
    EXPECT_EQ(r.result_int(), 413);
    EXPECT_NE(error_of(r).find("limit of 1024 bytes"), std::string::npos) << r.body();
    EXPECT_TRUE(a.closed_by_server());
  }
  {
    TestClient a(port_);  // body actually sent
    Response r = a.request("POST", "/v2/models/identity/infer", std::string(4096, ' '));
    EXPECT_EQ(r.result_int(), 413);
  }
  {
    TestClient a(port_);  // chunked: the size is only known while reading
    a.write_raw("POST /v2/models/identity/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                "800\r\n" + std::string(2048, ' ') + "\r\n0\r\n\r\n");
    EXPECT_EQ(a.read_response().result_int(), 413);
  }
  TestClient good(port_);
  EXPECT_EQ(good.request("POST", "/v2/models/identity/infer", kGoodInfer).result_int(), 200);
  Response s = slow.get();
  EXPECT_EQ(s.result_int(), 200) << s.body();
}

TEST_F(HttpServerTest, ExpectContinueThenBody) {
  start();
  TestClient c(port_);
  c.write_raw("POST /v2/models/identity/infer HTTP/1.1\r\nHost: x\r\nContent-Length: " +
              std::to_string(kGoodInfer.size()) + "\r\nExpect: 100-continue\r\n\r\n");
  Response cont = c.read_response();
  EXPECT_EQ(cont.result_int(), 100);
  c.write_raw(kGoodInfer);
  Response r = c.read_response();
  EXPECT_EQ(r.result_int(), 200);
  EXPECT_NE(r.body().find("OUTPUT0"), std::string::npos);
}

TEST_F(HttpServerTest, PipelinedRequestsAnswerInOrder) {
  start();
  TestClient c(port_);
  std::string slow_req = "POST /v2/models/slow/infer HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                         std::to_string(kGoodInfer.size()) + "\r\n\r\n" + kGoodInfer;
  c.write_raw(slow_req + "GET /v2/models/nope HTTP/1.1\r\nHost: x\r\n\r\n" +
              "GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(c.read_response().result_int(), 200);
  EXPECT_EQ(c.read_response().result_int(), 404);
  EXPECT_EQ(c.read_response().result_int(), 200);
}

TEST_F(HttpServerTest, SixteenClientsInFlightWithTwoIoThreads) {
  HttpServerOptions o;
  o.io_threads = 2;
  start(o);
  fake_.gate = 16;  // the fake answers only once all 16 requests are pending together
  std::vector<std::future<unsigned>> results;
  for (int i = 0; i < 16; ++i)
    results.push_back(std::async(std::launch::async, [&] {
      TestClient c(port_);
      return c.request("POST", "/v2/models/gated/infer", kGoodInfer).result_int();
    }));
  for (auto& f : results) EXPECT_EQ(f.get(), 200u);
  EXPECT_EQ(fake_.max_gated_pending.load(), 16);
}

TEST_F(HttpServerTest, HeaderLimitAndIdleTimeout) {
  HttpServerOptions o;
  o.max_header_bytes = 1024;
  o.idle_timeout = std::chrono::milliseconds(200);
  start(o);
  TestClient big(port_);
  Response r = big.request("GET", "/v2", "", {{"X-Big", std::string(4096, 'a')}});
  EXPECT_EQ(r.result_int(), 431);
  EXPECT_NE(error_of(r).find("1024 bytes"), std::string::npos);
  TestClient idle(port_);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_TRUE(idle.closed_by_server());
}

TEST_F(HttpServerTest, MalformedRequestGets400) {
  start();
  TestClient c(port_);
  c.write_raw("THIS IS NOT HTTP\r\n\r\n");
  Response r = c.read_response();
  EXPECT_EQ(r.result_int(), 400);
  EXPECT_NE(error_of(r).find("malformed HTTP request"), std::string::npos);
}

TEST_F(HttpServerTest, GracefulStopFinishesInFlightRequests) {
  start();
  auto slow = std::async(std::launch::async, [&] {
    TestClient c(port_);
    return c.request("POST", "/v2/models/slow/infer", kGoodInfer);
  });
  TestClient idle(port_);
  EXPECT_EQ(idle.request("GET", "/v2/health/live").result_int(), 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the slow request is in flight
  server_->stop();
  Response r = slow.get();
  EXPECT_EQ(r.result_int(), 200) << r.body();
  EXPECT_FALSE(r.keep_alive());
  EXPECT_TRUE(idle.closed_by_server());
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket s(ioc);
  boost::system::error_code ec;
  s.connect({boost::asio::ip::make_address("127.0.0.1"), port_}, ec);
  EXPECT_TRUE(ec) << "still accepting after stop";
}

TEST_F(HttpServerTest, MetricsPortAndBindErrors) {
  start();
  HttpServerOptions o;
  o.address = "127.0.0.1";
  o.port = 0;
  auto metrics = HttpServer::start(o, make_metrics_handler(fake_));
  ASSERT_TRUE(metrics.ok()) << metrics.status().to_string();
  TestClient c((*metrics)->port());
  Response r = c.request("GET", "/metrics");
  EXPECT_EQ(r.result_int(), 200);
  EXPECT_EQ(r[boost::beast::http::field::content_type], "text/plain; version=0.0.4");
  EXPECT_NE(r.body().find("nv_inference_count"), std::string::npos);
  EXPECT_EQ(c.request("GET", "/v2").result_int(), 404);

  o.port = port_;  // taken by the inference server
  auto clash = HttpServer::start(o, make_metrics_handler(fake_));
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(clash.status().message().find(std::to_string(port_)), std::string::npos);
  o.address = "not-an-address";
  EXPECT_EQ(HttpServer::start(o, make_metrics_handler(fake_)).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace osprey::server::http
