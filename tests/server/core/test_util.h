// Helpers for the server core tests: temporary repositories and tiny ONNX models.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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

}  // namespace osprey::server::testing
