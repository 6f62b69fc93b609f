// Helpers for the server core tests: temporary repositories and tiny ONNX models.
#pragma once

#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/osprey_backend.h"
#include "core/server_impl.h"
#include "model_builder.h"

namespace osprey::server::testing {

// A fresh directory under the system temp dir, removed when the object goes away.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("osprey_core_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  // Writes `content` to `relative` (parent directories created).
  void write(const std::string& relative, const std::string& content) const {
    auto p = path_ / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }

 private:
  std::filesystem::path path_;
};

inline void set_output_shape(onnx::ModelProto& m, int index, const std::vector<int64_t>& dims) {
  auto* shape = m.mutable_graph()->mutable_output(index)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (auto d : dims) {
    auto* dim = shape->add_dim();
    if (d >= 0) dim->set_dim_value(d);
    else dim->set_dim_param("N");
  }
}

// x: float[N,3] -> y = x + [1,2,3], z = x * [1,2,3] (both float[N,3]).
inline std::string add_mul_model() {
  osprey::testing::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 3});
  m.initializer("c", {3}, {1, 2, 3});
  m.node("Add", {"x", "c"}, {"y"});
  m.node("Mul", {"x", "c"}, {"z"});
  m.output("y").output("z");
  set_output_shape(m.proto(), 0, {-1, 3});
  set_output_shape(m.proto(), 1, {-1, 3});
  return m.bytes();
}

inline std::string floats_to_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

inline std::vector<float> bytes_to_floats(const std::string& s) {
  std::vector<float> v(s.size() / 4);
  std::memcpy(v.data(), s.data(), v.size() * 4);
  return v;
}

// A Server on the Osprey backend over `repo`, one engine thread; polling is left to the test
// (poll_once()). Null, with a test failure, when it cannot start.
inline std::unique_ptr<ServerImpl> make_test_server(const TempDir& repo,
                                                    ModelControlMode mode = ModelControlMode::kNone,
                                                    std::vector<std::string> startup = {}) {
  ServerOptions o;
  o.model_repository = repo.str();
  o.control_mode = mode;
  o.repository_poll_secs = 3600;
  o.startup_models = std::move(startup);
  o.total_threads = 1;
  auto s = ServerImpl::create(o, std::make_unique<OspreyBackend>());
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::move(s).value() : nullptr;
}

// A request for add_mul_model(): x = `x` as float[rows, 3].
inline InferRequest add_mul_request(const std::string& model, const std::vector<float>& x,
                                    int64_t rows) {
  InferRequest r;
  r.model_name = model;
  WireTensor t;
  t.name = "x";
  t.datatype = "FP32";
  t.shape = {rows, 3};
  t.data = floats_to_bytes(x);
  r.inputs.push_back(std::move(t));
  return r;
}

// The output `name` of a response, or null.
inline const WireTensor* find_output(const InferResponse& r, const std::string& name) {
  for (const auto& t : r.outputs)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace osprey::server::testing
