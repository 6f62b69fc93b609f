#include "core/peer_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "osprey/npy.h"

namespace osprey::bench {
namespace {

PeerOptions fake(const std::string& script, double timeout_s = 30) {
  PeerOptions o;
  o.python = OSPREY_BENCH_TEST_PYTHON;
  o.script = std::string(OSPREY_BENCH_FAKE_PEERS) + "/" + script + ".py";
  o.timeout_s = timeout_s;
  return o;
}

LoadRequest tiny_load() {
  LoadRequest req;
  req.model = "/nonexistent/model.onnx";
  req.threads = 2;
  req.inputs = {{"x", DType::kFloat32, {1, 3}, ""}};
  req.work_dir = ::testing::TempDir();
  return req;
}

TEST(BenchPeerProcess, SpeaksTheProtocol) {
  PeerProcess p("fake_ok", fake("fake_ok"));
  auto h = p.hello();
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_TRUE(h->available);
  EXPECT_EQ(h->version, "0.0.1");
  auto l = p.load(tiny_load());
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_DOUBLE_EQ(l->load_ms, 1.5);
  EXPECT_EQ(l->settings_json, "{\"threads\":2,\"mode\":\"fake\"}");
  EXPECT_EQ(l->precision_used, "fp32");
  auto r = p.run("/unused", 5, 2);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->latencies_us, (std::vector<double>{100, 101, 102, 100, 101}));
  EXPECT_EQ(r->peak_rss_bytes, 2 << 20);

  const std::string dir = ::testing::TempDir() + "/osprey_peer_outputs";
  std::filesystem::create_directories(dir);
  Tensor x(DType::kFloat32, {1, 3});
  x.data<float>()[0] = -1, x.data<float>()[1] = 2, x.data<float>()[2] = -3;
  ASSERT_TRUE(write_npy(dir + "/x.npy", x).ok());
  auto o = p.outputs(dir, dir);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o.value(), std::vector<std::string>{"y"});
  auto y = read_npy(dir + "/y.npy");
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y->data<float>()[1], 2);
  EXPECT_EQ(y->data<float>()[2], 0);

  // A malformed command gets ok:false and the peer keeps running.
  auto bad = p.request("bogus", "{\"cmd\":\"bogus\"}");
  ASSERT_TRUE(bad.ok());
  EXPECT_NE(bad->find("\"ok\": false"), std::string::npos);
  EXPECT_TRUE(p.run("/unused", 1, 0).ok());
  p.quit();
  EXPECT_FALSE(p.running());
}

TEST(BenchPeerProcess, CrashIsReportedWithStderrTail) {
  PeerProcess p("crasher", fake("crasher"));
  ASSERT_TRUE(p.hello().ok());
  auto l = p.load(tiny_load());
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(l.status().message().find("exited with code 3"), std::string::npos)
      << l.status().message();
  EXPECT_NE(l.status().message().find("simulated crash while loading"), std::string::npos)
      << l.status().message();
  EXPECT_FALSE(p.running());
  // The next request starts a fresh process.
  EXPECT_TRUE(p.hello().ok());
}

TEST(BenchPeerProcess, GarbageIsAClearError) {
  PeerProcess p("garbage", fake("garbage"));
  auto h = p.hello();
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(h.status().message().find("not a JSON object: 'this is not json'"), std::string::npos)
      << h.status().message();
  EXPECT_FALSE(p.running());
}

TEST(BenchPeerProcess, HungPeerIsKilledAfterTheTimeout) {
  PeerProcess p("hang", fake("hang", 1.0));
  const auto start = std::chrono::steady_clock::now();
  auto h = p.hello();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("did not answer 'hello' within 1 s"), std::string::npos)
      << h.status().message();
  EXPECT_NE(h.status().message().find("hanging forever"), std::string::npos)
      << h.status().message();
  EXPECT_LT(s, 20.0);  // a generous bound: the point is that it returns at all
  EXPECT_FALSE(p.running());
}

TEST(BenchPeerProcess, RefusalsAndUnavailability) {
  PeerProcess r("refuses", fake("refuses"));
  auto l = r.load(tiny_load());
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message(), "refuses: unsupported op Relu");
  EXPECT_TRUE(r.running());  // a refusal is an answer, the peer stays

  PeerProcess m("missing_pkg", fake("missing_pkg"));
  auto h = m.hello();
  ASSERT_TRUE(h.ok());
  EXPECT_FALSE(h->available);
  EXPECT_EQ(h->reason, "pip package missing_pkg not installed");
}

TEST(BenchPeerProcess, WrongLatencyCountIsAnError) {
  PeerProcess p("short_count", fake("short_count"));
  ASSERT_TRUE(p.load(tiny_load()).ok());
  auto r = p.run("/unused", 4, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("3 latencies for 4 iterations"), std::string::npos)
      << r.status().message();
}

TEST(BenchPeerProcess, MissingAdapterOrInterpreter) {
  PeerProcess a("nope", fake("no_such_adapter"));
  auto h = a.hello();
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), StatusCode::kNotFound);
  EXPECT_NE(h.status().message().find("no adapter for nope"), std::string::npos);
  PeerOptions o = fake("fake_ok");
  o.python = "/no/such/python";
  PeerProcess b("fake_ok", o);
  auto h2 = b.hello();
  ASSERT_FALSE(h2.ok());
  EXPECT_NE(h2.status().message().find("--python"), std::string::npos);
}

// An adapter given as a command line (how Osprey's own adapter, `osprey bench-adapter`, runs):
// argv as given, python and script unused.
TEST(BenchPeerProcess, AdapterAsACommandLine) {
  PeerOptions o;
  o.python = "/no/such/python";
  o.command = {OSPREY_BENCH_TEST_PYTHON, "-u",
               std::string(OSPREY_BENCH_FAKE_PEERS) + "/fake_ok.py"};
  PeerProcess p("fake_ok", o);
  auto h = p.hello();
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_TRUE(h->available);
  EXPECT_EQ(h->version, "0.0.1");
  p.quit();
  EXPECT_FALSE(p.running());

  PeerOptions bad;
  bad.command = {"/no/such/adapter", "bench-adapter"};
  PeerProcess q("osprey", bad);
  auto h2 = q.hello();
  ASSERT_FALSE(h2.ok());
  EXPECT_EQ(h2.status().code(), StatusCode::kNotFound);
  EXPECT_NE(h2.status().message().find("'/no/such/adapter' is not an executable file"),
            std::string::npos)
      << h2.status().message();
}

}  // namespace
}  // namespace osprey::bench
