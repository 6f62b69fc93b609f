// Comparison of an engine output with an expected value, as the ONNX backend tests do.
#pragma once

#include <string>

#include "osprey/tensor.h"

namespace osprey::conformance {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

// Empty string when `got` matches `want`, else a one-line reason.
std::string compare_values(const Value& got, const Value& want, const Tolerance& tol);

}  // namespace osprey::conformance
