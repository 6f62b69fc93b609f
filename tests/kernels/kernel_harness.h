// Shared helpers for the kernel unit tests in tests/kernels: attribute builders, a runner
// that executes one reference kernel on one node the way the executor would, and tensor
// builders / comparisons.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/registry.h"

namespace osprey::testing {

using Attrs = std::map<std::string, ir::Attribute>;

// ---- attribute builders

// An attribute of type `kType` whose field `Field` holds `v`.
template <ir::Attribute::Type kType, auto Field, class V>
ir::Attribute make_attr(V v) {
  ir::Attribute a;
  a.type = kType;
  a.*Field = std::move(v);
  return a;
}

inline ir::Attribute int_attr(int64_t v) {
  return make_attr<ir::Attribute::Type::kInt, &ir::Attribute::i>(v);
}
inline ir::Attribute ints_attr(std::vector<int64_t> v) {
  return make_attr<ir::Attribute::Type::kInts, &ir::Attribute::ints>(std::move(v));
}
inline ir::Attribute float_attr(float v) {
  return make_attr<ir::Attribute::Type::kFloat, &ir::Attribute::f>(v);
}
inline ir::Attribute floats_attr(std::vector<float> v) {
  return make_attr<ir::Attribute::Type::kFloats, &ir::Attribute::floats>(std::move(v));
}
inline ir::Attribute string_attr(const std::string& v) {
  return make_attr<ir::Attribute::Type::kString, &ir::Attribute::s>(v);
}
inline ir::Attribute strings_attr(std::vector<std::string> v) {
  return make_attr<ir::Attribute::Type::kStrings, &ir::Attribute::strings>(std::move(v));
}

// ---- running a kernel

// Element limit handed to KernelContext unless a test asks for another.
inline constexpr int64_t kDefaultMaxElements = int64_t{1} << 20;

// Runs the reference kernel of `op` (in `domain`, at `opset`, chosen by input 0's element
// type) on a one-node graph and returns all `num_outputs` outputs. An undefined input
// tensor is an omitted optional input. As in Executor::run_node, an attribute of the wrong
// type recorded by the kernel is reported as an invalid-argument error naming the node.
inline Result<std::vector<Tensor>> run_kernel(const std::string& op, int opset,
                                              const std::vector<Tensor>& inputs,
                                              const Attrs& attrs = {}, int num_outputs = 1,
                                              const std::string& domain = "",
                                              int64_t max_elements = kDefaultMaxElements) {
  ir::Node node;
  node.op_type = op;
  node.domain = domain;
  node.opset = opset;
  node.attributes = attrs;
  for (int i = 0; i < num_outputs; ++i) node.outputs.push_back(i);
  std::vector<Value> in_values;
  in_values.reserve(inputs.size());
  for (const auto& t : inputs) in_values.push_back(t.defined() ? Value(t) : Value());
  std::vector<const Value*> ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool present = inputs[i].defined();
    node.inputs.push_back(present ? static_cast<int>(i) : ir::kNoValue);
    ptrs.push_back(present ? &in_values[i] : nullptr);  // the executor passes null when omitted
  }
  std::vector<Value> outs(static_cast<size_t>(num_outputs));
  const DType dt = inputs.empty() ? DType::kUndefined : inputs[0].dtype();
  const KernelDef* k = find_kernel(op, domain, opset, dt, /*reference_only=*/true);
  if (!k) return not_found("no kernel for ", op);
  KernelContext ctx(node, std::move(ptrs), &outs, max_elements, nullptr);
  Status s = k->fn(ctx);
  if (!ctx.attribute_error().empty())
    return invalid_argument(node.display_name(), ": ", ctx.attribute_error());
  if (!s.ok()) return s;
  std::vector<Tensor> r;
  r.reserve(outs.size());
  for (auto& v : outs) r.push_back(v.tensor);
  return r;
}

// run_kernel for a single output: returns output 0.
inline Result<Tensor> run_single(const std::string& op, int opset,
                                 const std::vector<Tensor>& inputs, const Attrs& attrs = {},
                                 const std::string& domain = "",
                                 int64_t max_elements = kDefaultMaxElements) {
  auto r = run_kernel(op, opset, inputs, attrs, 1, domain, max_elements);
  if (!r.ok()) return r.status();
  return (*r)[0];
}

// ---- tensor builders

// A tensor holding `v`, reshaped to `shape` unless `shape` is empty (then 1-D).
template <class T>
Tensor vec(std::vector<T> v, Shape shape = {}) {
  Tensor t = Tensor::from_vector(v);
  return shape.empty() ? t : t.reshaped(shape);
}
inline Tensor fvec(std::vector<float> v, Shape shape = {}) {
  return vec<float>(std::move(v), shape);
}

// Float tensor 0, 1, ..., n-1, reshaped to `shape` unless empty.
inline Tensor iota(int64_t n, Shape shape = {}) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return vec(v, shape);
}

// Float tensor of `shape` with values uniform in [-1, 1) from a seeded generator.
inline Tensor random_tensor(Shape shape, uint32_t seed) {
  Tensor t(DType::kFloat32, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(gen);
  return t;
}

// The elements of `t` as a vector.
template <class T>
std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

// ---- comparisons

// Expects `t` to be a float32 tensor with want.size() elements, each within `tol` of want.
inline void expect_near(const Tensor& t, const std::vector<double>& want, double tol = 1e-5f) {
  ASSERT_EQ(t.dtype(), DType::kFloat32);
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(t.data<float>()[i], want[i], tol) << "at " << i;
}

// Expects `r` to have failed with kInvalidArgument and a message containing `needle`.
template <class T>
void expect_invalid(const Result<T>& r, const std::string& needle) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().to_string();
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
}

}  // namespace osprey::testing
