// Small models shared by the session tests.
#pragma once

#include <string>
#include <vector>

#include "model_builder.h"

namespace osprey::testing {

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

}  // namespace osprey::testing
