// AdapterServer (the adapter side of the peer protocol) over a real OspreyRunner and a tiny
// model, without processes: every command's answer, and the protocol errors the Python
// adapters give (bench/peers/adapter_common.py). The loop (serve_adapter) over a pipe.
#include "core/adapter_server.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/osprey_runner.h"
#include "kernels/cpu/cpu_capabilities.h"
#include "model_builder.h"
#include "osprey/npy.h"
#include "osprey_onnx/onnx.pb.h"

namespace osprey::bench {
namespace {

namespace fs = std::filesystem;

std::string temp_dir(const std::string& name) {
  const std::string d =
      (fs::absolute(::testing::TempDir()) / ("osprey_adapter_" + name)).lexically_normal().string();
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// y = Relu(x), x: float[N, 3].
void write_relu_model(const std::string& path) {
  osprey::testing::ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {-1, 3}).output("y");
  m.node("Relu", {"x"}, {"y"});
  std::ofstream f(path, std::ios::binary);
  f << m.bytes();
  ASSERT_TRUE(f.good());
}

rapidjson::Document parse(const std::string& line) {
  rapidjson::Document d;
  d.Parse(line.c_str());
  EXPECT_FALSE(d.HasParseError()) << line;
  EXPECT_TRUE(d.IsObject()) << line;
  return d;
}

// The error of an ok:false answer ("" if the answer was ok).
std::string error_of(const AdapterAnswer& a) {
  rapidjson::Document d = parse(a.line);
  EXPECT_TRUE(d.HasMember("ok") && d["ok"].IsBool()) << a.line;
  if (d["ok"].GetBool()) return "";
  EXPECT_TRUE(d.HasMember("error") && d["error"].IsString()) << a.line;
  return d["error"].GetString();
}

class AdapterServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    model_ = dir_ + "/relu.onnx";
    write_relu_model(model_);
    fs::create_directories(dir_ + "/inputs");
    Tensor x(DType::kFloat32, {2, 3});
    const float values[] = {-1, 2, -3, 4, 0, -0.5f};
    for (int i = 0; i < 6; ++i) x.data<float>()[i] = values[i];
    ASSERT_TRUE(write_npy(dir_ + "/inputs/x.npy", x).ok());
  }

  std::string load_line(const std::string& shape = "[2,3]", const std::string& extra = "") {
    return "{\"cmd\":\"load\",\"model\":\"" + model_ +
           "\",\"threads\":1,\"precision\":\"fp32\",\"batch\":2,\"inputs\":{\"x\":{\"dtype\":"
           "\"float32\",\"shape\":" +
           shape + "}},\"work_dir\":\"" + dir_ + "/work\",\"options\":{}" + extra + "}";
  }
  std::string run_line(int iterations, int warmup) {
    return "{\"cmd\":\"run\",\"inputs_dir\":\"" + dir_ +
           "/inputs\",\"iterations\":" + std::to_string(iterations) +
           ",\"warmup\":" + std::to_string(warmup) + "}";
  }

  std::string dir_, model_;
  OspreyRunner runner_{"test", OspreyPlacement::kAdapterProcess};
  AdapterServer server_{runner_};
};

TEST_F(AdapterServerTest, HelloSaysWhatOspreyIs) {
  AdapterAnswer a = server_.handle_line("{\"cmd\":\"hello\"}");
  EXPECT_FALSE(a.quit);
  rapidjson::Document d = parse(a.line);
  EXPECT_TRUE(d["ok"].GetBool());
  EXPECT_STREQ(d["framework"].GetString(), "osprey");
  EXPECT_STREQ(d["version"].GetString(), "test");
  EXPECT_TRUE(d["available"].GetBool());
  EXPECT_TRUE(d["pin_threads"].GetBool());
  EXPECT_NE(std::string(d["pin_threads_note"].GetString()).find("pin_threads"), std::string::npos);
  EXPECT_FALSE(d.HasMember("reason"));
}

TEST_F(AdapterServerTest, LoadRunOutputs) {
  AdapterAnswer load = server_.handle_line(load_line());
  ASSERT_EQ(error_of(load), "");
  rapidjson::Document l = parse(load.line);
  EXPECT_TRUE(l["load_ms"].IsNumber());
  EXPECT_GE(l["load_ms"].GetDouble(), 0);
  EXPECT_STREQ(l["precision_used"].GetString(), "fp32");
  ASSERT_TRUE(l["settings"].IsObject());
  EXPECT_EQ(l["settings"]["threads"].GetInt(), 1);
  EXPECT_FALSE(l["settings"]["in_process"].GetBool());
  EXPECT_NE(std::string(l["notes"].GetString()).find("own process"), std::string::npos);
  EXPECT_TRUE(fs::is_directory(dir_ + "/work"));

  AdapterAnswer run = server_.handle_line(run_line(5, 2));
  ASSERT_EQ(error_of(run), "");
  rapidjson::Document r = parse(run.line);
  ASSERT_TRUE(r["latencies_us"].IsArray());
  EXPECT_EQ(r["latencies_us"].Size(), 5u);
  for (const auto& v : r["latencies_us"].GetArray()) EXPECT_GE(v.GetDouble(), 0);
  EXPECT_GT(r["rss_bytes"].GetInt64(), 0);
  EXPECT_GE(r["peak_rss_bytes"].GetInt64(), r["rss_bytes"].GetInt64());

  const std::string out = dir_ + "/outs/deeper";  // created by the adapter, as in Python
  AdapterAnswer outs = server_.handle_line("{\"cmd\":\"outputs\",\"inputs_dir\":\"" + dir_ +
                                           "/inputs\",\"out_dir\":\"" + out + "\"}");
  ASSERT_EQ(error_of(outs), "");
  rapidjson::Document o = parse(outs.line);
  ASSERT_TRUE(o["outputs"].IsArray());
  ASSERT_EQ(o["outputs"].Size(), 1u);
  EXPECT_STREQ(o["outputs"][0].GetString(), "y");
  auto y = read_npy(out + "/y.npy");
  ASSERT_TRUE(y.ok()) << y.status().message();
  ASSERT_EQ(y->shape(), (Shape{2, 3}));
  const float want[] = {0, 2, 0, 4, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y->data<float>()[i], want[i]) << i;

  AdapterAnswer quit = server_.handle_line("{\"cmd\":\"quit\"}");
  EXPECT_TRUE(quit.quit);
  EXPECT_EQ(error_of(quit), "");
}

TEST_F(AdapterServerTest, MalformedAndUnknownCommands) {
  AdapterAnswer a = server_.handle_line("{not json");
  EXPECT_FALSE(a.quit);
  EXPECT_EQ(error_of(a).rfind("malformed command: not JSON (", 0), 0u) << a.line;
  EXPECT_NE(error_of(a).find("at column 2"), std::string::npos) << a.line;
  EXPECT_EQ(error_of(server_.handle_line("[1,2]")), "malformed command: expected a JSON object");
  EXPECT_EQ(error_of(server_.handle_line("{\"cmd\":\"dance\"}")),
            "unknown cmd \"dance\": expected hello, load, run, outputs or quit");
  EXPECT_EQ(error_of(server_.handle_line("{}")),
            "unknown cmd null: expected hello, load, run, outputs or quit");
  EXPECT_EQ(error_of(server_.handle_line("{\"cmd\":7}")),
            "unknown cmd 7: expected hello, load, run, outputs or quit");
  // Still serving afterwards.
  EXPECT_EQ(error_of(server_.handle_line("{\"cmd\":\"hello\"}")), "");
}

TEST_F(AdapterServerTest, RunAndOutputsBeforeLoadAreRefused) {
  EXPECT_EQ(error_of(server_.handle_line(run_line(3, 0))),
            "run: no model loaded (send a successful load first)");
  EXPECT_EQ(error_of(server_.handle_line("{\"cmd\":\"outputs\",\"inputs_dir\":\"/a\","
                                         "\"out_dir\":\"/b\"}")),
            "outputs: no model loaded (send a successful load first)");
}

TEST_F(AdapterServerTest, BadLoadFieldsAreNamed) {
  EXPECT_EQ(error_of(server_.handle_line("{\"cmd\":\"load\"}")), "load: missing field 'model'");
  EXPECT_EQ(error_of(server_.handle_line("{\"cmd\":\"load\",\"model\":\"relu.onnx\"}")),
            "load: field 'model' must be an absolute path, got 'relu.onnx'");
  EXPECT_EQ(error_of(server_.handle_line("{\"cmd\":\"load\",\"model\":\"/no/such.onnx\"}")),
            "load: model file not found: /no/such.onnx");
  EXPECT_EQ(error_of(server_.handle_line(load_line("[2,0]"))),
            "load: input 'x': shape must be a list of positive integers, got [2,0]");
  EXPECT_EQ(error_of(server_.handle_line(load_line("[2,3]", ",\"pin_threads\":1"))),
            "load: field 'pin_threads' must be true or false, got 1");
  std::string opt = load_line();
  opt.replace(opt.find("\"options\":{}"), 12, "\"options\":{\"k\":\"v\"}");
  EXPECT_EQ(error_of(server_.handle_line(opt)),
            "load: unknown option 'k' for osprey (known: none)");
  std::string threads = load_line();
  threads.replace(threads.find("\"threads\":1"), 11, "\"threads\":0");
  EXPECT_EQ(error_of(server_.handle_line(threads)),
            "load: field 'threads' must be in [1, 1024], got 0");
  threads.replace(threads.find("\"threads\":0"), 11, "\"threads\":true");
  EXPECT_EQ(error_of(server_.handle_line(threads)),
            "load: field 'threads' must be an integer, got true");
}

TEST_F(AdapterServerTest, FastPrecisionLoadsInBf16OrSaysWhyNot) {
  std::string fast = load_line();
  fast.replace(fast.find("\"fp32\""), 6, "\"fast\"");
  const AdapterAnswer a = server_.handle_line(fast);
  if (!cpu::bf16_compute_available()) {
    EXPECT_NE(error_of(a).find("native bfloat16"), std::string::npos) << error_of(a);
    return;
  }
  ASSERT_EQ(error_of(a), "");
  rapidjson::Document l;
  l.Parse(a.line.c_str());
  EXPECT_STREQ(l["precision_used"].GetString(), "bf16");
}

TEST_F(AdapterServerTest, InputFilesMustMatchTheLoad) {
  ASSERT_EQ(error_of(server_.handle_line(load_line("[4,3]"))), "");
  EXPECT_EQ(error_of(server_.handle_line(run_line(1, 0))),
            "input 'x' in " + dir_ + "/inputs/x.npy is float32[2, 3], load declared float32[4, 3]");
  fs::remove(dir_ + "/inputs/x.npy");
  EXPECT_EQ(error_of(server_.handle_line(run_line(1, 0))),
            "input file not found: " + dir_ + "/inputs/x.npy");
  std::string zero = run_line(0, 0);
  EXPECT_EQ(error_of(server_.handle_line(zero)),
            "run: field 'iterations' must be in [1, 1000000], got 0");
}

TEST_F(AdapterServerTest, FailedLoadLeavesNoModel) {
  ASSERT_EQ(error_of(server_.handle_line(load_line())), "");
  std::ofstream(dir_ + "/broken.onnx") << "not a model";
  std::string broken = load_line();
  broken.replace(broken.find(model_), model_.size(), dir_ + "/broken.onnx");
  EXPECT_NE(error_of(server_.handle_line(broken)), "");
  EXPECT_EQ(error_of(server_.handle_line(run_line(1, 0))),
            "run: no model loaded (send a successful load first)");
}

TEST_F(AdapterServerTest, ServeAnswersEachLineUntilQuit) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::istringstream in(
      "{\"cmd\":\"hello\"}\n\n   \n{\"cmd\":\"nope\"}\n{\"cmd\":\"quit\"}\n"
      "{\"cmd\":\"hello\"}\n");
  const Status s = serve_adapter(runner_, in, fds[1]);
  close(fds[1]);
  ASSERT_TRUE(s.ok()) << s.message();
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
  close(fds[0]);
  std::vector<std::string> lines;
  std::istringstream is(text);
  for (std::string l; std::getline(is, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 3u) << text;  // blank lines skipped, nothing after quit
  EXPECT_NE(lines[0].find("\"available\":true"), std::string::npos);
  EXPECT_NE(lines[1].find("unknown cmd \\\"nope\\\""), std::string::npos) << lines[1];
  EXPECT_EQ(lines[2], "{\"ok\":true}");
}

}  // namespace
}  // namespace osprey::bench
