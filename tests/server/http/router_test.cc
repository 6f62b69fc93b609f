// Every route against the FakeServer, without sockets.
#include "frontend/http/router.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <future>

#include "fake_server.h"

namespace osprey::server::http {
namespace {

// The fake, also recording the load parameters the router passed on.
class LoadRecordingServer : public testing::FakeServer {
 public:
  using testing::FakeServer::load_model;
  Status load_model(const std::string& model, const ModelLoadOptions& options) override {
    load_configs.push_back(options.config.value_or("<none>"));
    for (const auto& [path, bytes] : options.files) load_files.push_back(path + "=" + bytes);
    return load_model(model);
  }
  std::vector<std::string> load_configs;
  std::vector<std::string> load_files;
};

class RouterTest : public ::testing::Test {
 protected:
  HttpResponse call(const std::string& method, const std::string& target,
                    std::string body = "", std::optional<std::string> header = std::nullopt) {
    auto promise = std::make_shared<std::promise<HttpResponse>>();
    auto future = promise->get_future();
    HttpRequest req{method, target, std::move(header), std::move(body)};
    router_.handle(std::move(req), [promise](HttpResponse r) { promise->set_value(std::move(r)); });
    EXPECT_EQ(future.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    return future.get();
  }
  static rapidjson::Document json(const HttpResponse& r) {
    rapidjson::Document d;
    d.Parse(r.body.data(), r.inference_header_length.value_or(r.body.size()));
    EXPECT_FALSE(d.HasParseError()) << r.body;
    return d;
  }
  static std::string error_of(const HttpResponse& r) {
    auto d = json(r);
    return d.IsObject() && d.HasMember("error") ? d["error"].GetString() : "";
  }

  LoadRecordingServer server_;
  Router router_{server_};
};

TEST_F(RouterTest, ServerMetadataAndHealth) {
  auto md = call("GET", "/v2");
  EXPECT_EQ(md.status, 200);
  EXPECT_EQ(md.content_type, "application/json");
  EXPECT_STREQ(json(md)["name"].GetString(), "osprey");
  EXPECT_EQ(call("GET", "/v2/health/live").status, 200);
  EXPECT_EQ(call("GET", "/v2/health/ready").status, 200);
  server_.ready_ = false;
  server_.live_ = false;
  auto ready = call("GET", "/v2/health/ready");
  EXPECT_EQ(ready.status, 400);
  EXPECT_TRUE(ready.body.empty());
  EXPECT_EQ(call("GET", "/v2/health/live").status, 400);
}

TEST_F(RouterTest, ModelMetadataAndReady) {
  auto md = call("GET", "/v2/models/identity");
  ASSERT_EQ(md.status, 200);
  EXPECT_STREQ(json(md)["versions"][1].GetString(), "2");
  EXPECT_EQ(call("GET", "/v2/models/identity/versions/2").status, 200);
  auto missing = call("GET", "/v2/models/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(error_of(missing).find("unknown model 'nope'"), std::string::npos);
  EXPECT_EQ(call("GET", "/v2/models/identity/versions/9").status, 404);
  auto bad_version = call("GET", "/v2/models/identity/versions/abc");
  EXPECT_EQ(bad_version.status, 400);
  EXPECT_NE(error_of(bad_version).find("decimal digits"), std::string::npos);

  EXPECT_EQ(call("GET", "/v2/models/identity/ready").status, 200);
  EXPECT_EQ(call("GET", "/v2/models/identity/versions/1/ready").status, 200);
  for (const char* target : {"/v2/models/loading/ready", "/v2/models/nope/ready"}) {
    auto r = call("GET", target);
    EXPECT_EQ(r.status, 400) << target;
    EXPECT_TRUE(r.body.empty()) << target;
  }
}

TEST_F(RouterTest, PercentDecodingAndNameChecks) {
  EXPECT_EQ(call("GET", "/v2/models/iden%74ity/ready?x=1").status, 200);
  auto bad_escape = call("GET", "/v2/models/a%zz/ready");
  EXPECT_EQ(bad_escape.status, 400);
  EXPECT_NE(error_of(bad_escape).find("percent-escape"), std::string::npos);
  auto slash = call("GET", "/v2/models/a%2Fb");
  EXPECT_EQ(slash.status, 400);
  EXPECT_NE(error_of(slash).find("model name"), std::string::npos);
  EXPECT_EQ(call("GET", "/v2/models/..").status, 400);
}

TEST_F(RouterTest, UnknownRoutesAndWrongMethods) {
  for (const char* t : {"/v3", "/v2/foo", "/v2/models/identity/bogus", "/v2/health",
                        "/v2/models/identity/versions/1/x/y", "/", "/v2/"}) {
    auto r = call("GET", t);
    EXPECT_EQ(r.status, 404) << t;
    EXPECT_FALSE(error_of(r).empty()) << t;
  }
  auto r = call("GET", "/v2/models/identity/infer");
  EXPECT_EQ(r.status, 405);
  EXPECT_NE(error_of(r).find("use POST"), std::string::npos);
  EXPECT_EQ(call("POST", "/v2/health/live").status, 405);
  EXPECT_EQ(call("DELETE", "/v2/models/identity").status, 405);
  EXPECT_EQ(call("GET", "/v2/repository/index").status, 405);
  EXPECT_EQ(call("GET", "/v2/repository/models/identity/load").status, 405);
  EXPECT_EQ(call("POST", "/v2/models/stats").status, 405);
  EXPECT_EQ(call("GET", "relative").status, 400);
}

TEST_F(RouterTest, InferJson) {
  auto r = call("POST", "/v2/models/identity/versions/2/infer",
                R"({"id":"q","inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,2],"data":[[4,5]]}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_FALSE(r.inference_header_length);
  auto d = json(r);
  EXPECT_STREQ(d["model_name"].GetString(), "identity");
  EXPECT_STREQ(d["model_version"].GetString(), "2");
  EXPECT_STREQ(d["id"].GetString(), "q");
  EXPECT_STREQ(d["outputs"][0]["name"].GetString(), "OUTPUT0");
  EXPECT_EQ(d["outputs"][0]["data"][1].GetInt(), 5);
  EXPECT_EQ(server_.last_request.model_version, "2");
}

TEST_F(RouterTest, InferBinary) {
  std::string json_part =
      R"({"inputs":[{"name":"INPUT0","datatype":"UINT8","shape":[3],"parameters":{"binary_data_size":3}}],)"
      R"("parameters":{"binary_data_output":true}})";
  auto r = call("POST", "/v2/models/identity/infer", json_part + "abc",
                std::to_string(json_part.size()));
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(r.inference_header_length);
  EXPECT_EQ(r.content_type, "application/octet-stream");
  EXPECT_EQ(r.body.substr(*r.inference_header_length), "abc");
  EXPECT_EQ(json(r)["outputs"][0]["parameters"]["binary_data_size"].GetInt(), 3);
}

TEST_F(RouterTest, InferErrorsMapToStatusCodes) {
  const std::string good =
      R"({"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1],"data":[1]}]})";
  auto bad_json = call("POST", "/v2/models/identity/infer", "{\"inputs\":");
  EXPECT_EQ(bad_json.status, 400);
  EXPECT_NE(error_of(bad_json).find("offset"), std::string::npos);
  EXPECT_NE(error_of(bad_json).find("model 'identity'"), std::string::npos);
  auto bad_header = call("POST", "/v2/models/identity/infer", good, "x1");
  EXPECT_EQ(bad_header.status, 400);
  EXPECT_NE(error_of(bad_header).find("Inference-Header-Content-Length"), std::string::npos);
  EXPECT_EQ(call("POST", "/v2/models/nope/infer", good).status, 404);
  auto busy = call("POST", "/v2/models/busy/infer", good);
  EXPECT_EQ(busy.status, 503);
  EXPECT_NE(error_of(busy).find("queue full"), std::string::npos);
  EXPECT_EQ(call("POST", "/v2/models/broken/infer", good).status, 500);
  auto unknown_output = call("POST", "/v2/models/identity/infer",
      R"({"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1],"data":[1]}],"outputs":[{"name":"zz"}]})");
  EXPECT_EQ(unknown_output.status, 400);
  EXPECT_NE(error_of(unknown_output).find("'zz'"), std::string::npos);
  server_.limits_.max_tensor_elements = 4;
  auto big = call("POST", "/v2/models/identity/infer",
                  R"({"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[5],"data":[1,2,3,4,5]}]})");
  EXPECT_EQ(big.status, 400);
  EXPECT_NE(error_of(big).find("limit"), std::string::npos);
}

TEST_F(RouterTest, RepositoryIndexLoadUnload) {
  auto all = call("POST", "/v2/repository/index");
  ASSERT_EQ(all.status, 200);
  EXPECT_EQ(json(all).Size(), 2u);
  auto ready = call("POST", "/v2/repository/index", R"({"ready":true})");
  ASSERT_EQ(ready.status, 200);
  EXPECT_EQ(json(ready).Size(), 1u);
  EXPECT_EQ(call("POST", "/v2/repository/index", R"({"ready":1})").status, 400);
  EXPECT_EQ(call("POST", "/v2/repository/index", "{").status, 400);

  EXPECT_EQ(call("POST", "/v2/repository/models/identity/load").status, 200);
  EXPECT_EQ(call("POST", "/v2/repository/models/identity/unload", "{}").status, 200);
  EXPECT_EQ(server_.load_calls, (std::vector<std::string>{"load:identity", "unload:identity"}));
  EXPECT_EQ(call("POST", "/v2/repository/models/nope/load").status, 404);
}

TEST_F(RouterTest, LoadParameters) {
  // Triton's config override: a JSON string, passed on as is.
  const std::string config = R"({\"max_batch_size\": 4})";
  EXPECT_EQ(call("POST", "/v2/repository/models/identity/load",
                 R"({"parameters":{"config":")" + config + R"("}})")
                .status,
            200);
  EXPECT_EQ(call("POST", "/v2/repository/models/identity/load", R"({"parameters":{}})").status,
            200);
  EXPECT_EQ(server_.load_configs, (std::vector<std::string>{R"({"max_batch_size": 4})", "<none>"}));

  auto not_string = call("POST", "/v2/repository/models/identity/load",
                         R"({"parameters":{"config":{"max_batch_size":4}}})");
  EXPECT_EQ(not_string.status, 400);
  EXPECT_NE(error_of(not_string).find("'config' must be a string"), std::string::npos);
  auto unknown = call("POST", "/v2/repository/models/identity/load",
                      R"({"parameters":{"config":"{}","colour":"red"}})");
  EXPECT_EQ(unknown.status, 400);
  EXPECT_NE(error_of(unknown).find("unknown load parameter 'colour'"), std::string::npos);
  // Files: base64 strings (as tritonclient sends them), the path checked.
  EXPECT_EQ(call("POST", "/v2/repository/models/identity/load",
                 R"({"parameters":{"config":"{}","file:1/model.onnx":"TWFu"}})")
                .status,
            200);
  EXPECT_EQ(server_.load_files, std::vector<std::string>{"1/model.onnx=Man"});
  auto bad_base64 = call("POST", "/v2/repository/models/identity/load",
                         R"({"parameters":{"config":"{}","file:1/model.onnx":"TWF"}})");
  EXPECT_EQ(bad_base64.status, 400);
  EXPECT_NE(error_of(bad_base64).find("'file:1/model.onnx'"), std::string::npos);
  EXPECT_NE(error_of(bad_base64).find("base64"), std::string::npos);
  auto traversal = call("POST", "/v2/repository/models/identity/load",
                        R"({"parameters":{"config":"{}","file:../../etc/x":"TWFu"}})");
  EXPECT_EQ(traversal.status, 400);
  EXPECT_NE(error_of(traversal).find("the path must be"), std::string::npos);
  auto on_unload =
      call("POST", "/v2/repository/models/identity/unload", R"({"parameters":{"config":"{}"}})");
  EXPECT_EQ(on_unload.status, 400);
  EXPECT_NE(error_of(on_unload).find("unknown unload parameter 'config'"), std::string::npos);
  EXPECT_EQ(server_.load_configs.size(), 3u) << "a refused request reached the server";
}

TEST_F(RouterTest, StatisticsAndConfig) {
  auto all = call("GET", "/v2/models/stats");
  ASSERT_EQ(all.status, 200);
  EXPECT_EQ(json(all)["model_stats"][0]["inference_count"].GetUint64(), 12u);
  auto one = call("GET", "/v2/models/identity/versions/1/stats");
  ASSERT_EQ(one.status, 200);
  EXPECT_STREQ(json(one)["model_stats"][0]["name"].GetString(), "identity");
  EXPECT_EQ(call("GET", "/v2/models/nope/stats").status, 404);
  auto cfg = call("GET", "/v2/models/identity/config");
  ASSERT_EQ(cfg.status, 200);
  auto d = json(cfg);
  EXPECT_EQ(d["max_batch_size"].GetInt(), 8);
  EXPECT_STREQ(d["input"][0]["name"].GetString(), "INPUT0");
  EXPECT_EQ(call("GET", "/v2/models/nope/config").status, 404);
}

TEST(MetricsHandler, ServesPrometheusText) {
  testing::FakeServer server;
  HttpHandler h = make_metrics_handler(server);
  auto call = [&](const char* method, const char* target) {
    HttpResponse out;
    h(HttpRequest{method, target, std::nullopt, ""}, [&](HttpResponse r) { out = std::move(r); });
    return out;
  };
  auto ok = call("GET", "/metrics");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.content_type, "text/plain; version=0.0.4");
  EXPECT_NE(ok.body.find("nv_inference_count"), std::string::npos);
  EXPECT_EQ(call("GET", "/v2").status, 404);
  EXPECT_EQ(call("POST", "/metrics").status, 405);
}

TEST(StatusMapping, FollowsTriton) {
  EXPECT_EQ(http_status_of(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(http_status_of(StatusCode::kUnimplemented), 400);
  EXPECT_EQ(http_status_of(StatusCode::kResourceExhausted), 400);
  EXPECT_EQ(http_status_of(StatusCode::kFailedPrecondition), 400);
  EXPECT_EQ(http_status_of(StatusCode::kNotFound), 404);
  EXPECT_EQ(http_status_of(StatusCode::kUnavailable), 503);
  EXPECT_EQ(http_status_of(StatusCode::kInternal), 500);
}

}  // namespace
}  // namespace osprey::server::http
