// Scalar activation formulas shared by the element-wise activation kernels (unary.cc) and the
// fused ops that apply an activation to their result (fused.cc), so both compute the same
// values. Each takes and returns float or double.
#pragma once

#include <algorithm>
#include <cmath>

namespace osprey::ref {

// 1 / (1 + e^-x), written not to overflow for large |x|.
template <class C>
inline C sigmoid(C x) {
  return x >= 0 ? C(1) / (C(1) + std::exp(-x)) : std::exp(x) / (C(1) + std::exp(x));
}

template <class C>
inline C hard_sigmoid(C x, C alpha, C beta) {
  return std::max(C(0), std::min(C(1), alpha * x + beta));
}

template <class C>
inline C hardswish(C x) {
  return x * std::max(C(0), std::min(C(1), x / C(6) + C(0.5)));
}

template <class C>
inline C leaky_relu(C x, C alpha) {
  return x < 0 ? alpha * x : x;
}

// x * sigmoid(x)
template <class C>
inline C silu(C x) {
  return x * sigmoid(x);
}

// 0.5 x (1 + erf(x / sqrt 2))
template <class C>
inline C gelu_erf(C x) {
  return C(0.5) * x * (C(1) + std::erf(x * C(0.70710678118654752440)));
}

// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
template <class C>
inline C gelu_tanh(C x) {
  return C(0.5) * x * (C(1) + std::tanh(C(0.79788456080286535588) * (x + C(0.044715) * x * x * x)));
}

}  // namespace osprey::ref
