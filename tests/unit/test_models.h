// Small models shared by the session tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "model_builder.h"
#include "osprey/session.h"

namespace osprey::testing {

// A float32 tensor whose element i is start + step * (i % period): deterministic test input.
inline Tensor ramp_filled(Shape shape, float start, float step, int64_t period = 97) {
  Tensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + step * static_cast<float>(i % period);
  return t;
}

// y = Relu(x @ W + b), x: float[N,4], W [4,3], b [3].
inline std::string mlp_model() {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 4}).output("y");
  std::vector<float> w(12);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * static_cast<float>(i) - 0.5f;
  m.initializer("W", {4, 3}, w);
  m.initializer("b", {3}, {0.1f, -0.2f, 0.3f});
  m.node("MatMul", {"x", "W"}, {"xw"});
  m.node("Add", {"xw", "b"}, {"z"});
  m.node("Relu", {"z"}, {"y"});
  return m.bytes();
}

// y = x + w, x: float[2], w: float[2] stored in the external file `location`.
inline ModelBuilder external_data_model(const std::string& location) {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {2}).output("y");
  auto& w = m.initializer("w", {2}, {});
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w.add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  m.node("Add", {"x", "w"}, {"y"});
  return m;
}

// A one-thread session of `bytes` at `level` (a failed load is a test failure and nullptr).
inline std::unique_ptr<Session> load_test_session(const std::string& bytes, int level) {
  SessionOptions o;
  o.optimization_level = level;
  o.threads = 1;
  auto s = Session::load_from_bytes(bytes, o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::move(*s) : nullptr;
}

// How many times `what` occurs in `s` (overlaps counted).
inline int count_occurrences(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace osprey::testing
