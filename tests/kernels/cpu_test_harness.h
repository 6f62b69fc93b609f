// Helpers for the fast CPU kernel tests (cpu_*_test.cc): run one node with the fast kernel
// (optionally prepared, as a session would at load, with a given thread pool) and with the
// reference kernel, and compare with a tolerance relative to the outputs' magnitude.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernel_harness.h"
#include "kernels/cpu/row_kernels.h"
#include "kernels/kernel.h"
#include "kernels/registry.h"
#include "threading/thread_pool.h"

namespace osprey::testing {

// One node bound to one kernel, with the state its prepare step returned (if any).
class NodeRunner {
 public:
  // `constants[i]` defined = input i is an initializer the prepare step sees.
  // `input_dtype`: the type of input 0 the kernel is looked up for.
  // `prepare_pool`: the session's pool as the prepare step sees it (null: none).
  NodeRunner(std::string op, std::string domain, int opset, Attrs attrs, Device device,
             const std::vector<Tensor>& constants = {}, DType input_dtype = DType::kFloat32,
             ThreadPool* prepare_pool = nullptr) {
    node_.op_type = std::move(op);
    node_.domain = std::move(domain);
    node_.opset = opset;
    node_.attributes = std::move(attrs);
    node_.outputs = {0};
    kernel_ =
        find_kernel(node_.op_type, node_.domain, opset, input_dtype, device == Device::ref);
    if (!kernel_ || kernel_->device != device) {
      kernel_ = nullptr;
      return;
    }
    if (!constants.empty() && kernel_->prepare) {
      std::vector<Value> vals;
      vals.reserve(constants.size());
      std::vector<const Value*> ptrs;
      for (const auto& t : constants) vals.push_back(t.defined() ? Value(t) : Value());
      for (size_t i = 0; i < constants.size(); ++i)
        ptrs.push_back(constants[i].defined() ? &vals[i] : nullptr);
      std::vector<Value> outs(1);
      KernelContext ctx(node_, std::move(ptrs), &outs, kDefaultMaxElements, nullptr, prepare_pool);
      auto st = kernel_->prepare(ctx);
      prepare_status_ = st.ok() ? Status::Ok() : st.status();
      if (st.ok()) state_ = *st;
    }
  }
  bool found() const { return kernel_ != nullptr; }
  const Status& prepare_status() const { return prepare_status_; }
  KernelState* state() const { return state_.get(); }

  Result<Tensor> run(const std::vector<Tensor>& inputs, ThreadPool* pool = nullptr) const {
    auto outs = run_outputs(inputs, 1, pool);
    if (!outs.ok()) return outs.status();
    return (*outs)[0];
  }

  // Runs the node with `num_outputs` outputs and returns them all.
  Result<std::vector<Tensor>> run_outputs(const std::vector<Tensor>& inputs, int num_outputs,
                                          ThreadPool* pool = nullptr) const {
    if (!kernel_) return not_found("no kernel for ", node_.op_type);
    ir::Node node = node_;
    node.inputs.clear();
    std::vector<Value> vals;
    vals.reserve(inputs.size());
    std::vector<const Value*> ptrs;
    for (const auto& t : inputs) vals.push_back(t.defined() ? Value(t) : Value());
    for (size_t i = 0; i < inputs.size(); ++i) {
      node.inputs.push_back(inputs[i].defined() ? static_cast<int>(i) : ir::kNoValue);
      ptrs.push_back(inputs[i].defined() ? &vals[i] : nullptr);
    }
    node.outputs.clear();
    for (int i = 0; i < num_outputs; ++i) node.outputs.push_back(i);
    std::vector<Value> outs(static_cast<size_t>(num_outputs));
    KernelContext ctx(node, std::move(ptrs), &outs, kDefaultMaxElements, nullptr, pool);
    ctx.set_state(state_.get());
    Status s = kernel_->fn(ctx);
    if (!ctx.attribute_error().empty()) return invalid_argument(ctx.attribute_error());
    if (!s.ok()) return s;
    std::vector<Tensor> r;
    for (const Value& v : outs) r.push_back(v.tensor);
    return r;
  }

 private:
  ir::Node node_;
  const KernelDef* kernel_ = nullptr;
  std::shared_ptr<KernelState> state_;
  Status prepare_status_;
};

// Expects equal shapes and |got - want| <= tol * max(1, max |want|) everywhere.
inline void expect_close(const Tensor& got, const Tensor& want, double tol = 1e-4) {
  ASSERT_EQ(got.dtype(), DType::kFloat32);
  ASSERT_EQ(got.shape(), want.shape())
      << shape_to_string(got.shape()) << " vs " << shape_to_string(want.shape());
  double scale = 1.0;
  for (int64_t i = 0; i < want.numel(); ++i)
    scale = std::max(scale, std::fabs(static_cast<double>(want.data<float>()[i])));
  double worst = 0;
  int64_t at = -1;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double d = std::fabs(static_cast<double>(got.data<float>()[i]) - want.data<float>()[i]);
    if (!(d <= worst)) {
      worst = d;
      at = i;
    }
  }
  EXPECT_LE(worst, tol * scale) << "worst difference at element " << at << " (scale " << scale
                                << ")";
}

// The vector ISA variants of the row kernels this CPU can run.
inline std::vector<cpu::VectorIsa> runnable_isas() {
  std::vector<cpu::VectorIsa> out;
  for (cpu::VectorIsa isa : {cpu::VectorIsa::generic, cpu::VectorIsa::avx2, cpu::VectorIsa::avx512})
    if (cpu::vector_isa_supported(isa)) out.push_back(isa);
  return out;
}

// Seeded uniform uint8 / int8 values over the type's whole range.
inline Tensor random_bytes(DType t, Shape shape, uint32_t seed) {
  Tensor r(t, std::move(shape));
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(t == DType::kInt8 ? -128 : 0, t == DType::kInt8 ? 127 : 255);
  for (int64_t i = 0; i < r.numel(); ++i) {
    const int v = d(gen);
    if (t == DType::kInt8) r.data<int8_t>()[i] = static_cast<int8_t>(v);
    else r.data<uint8_t>()[i] = static_cast<uint8_t>(v);
  }
  return r;
}

// One uint8 / int8 value (a zero point).
inline Tensor byte_scalar(DType t, int v) {
  return t == DType::kInt8 ? vec<int8_t>({static_cast<int8_t>(v)}) : vec<uint8_t>({static_cast<uint8_t>(v)});
}

// Two int32 tensors of one shape and the same values.
inline bool int32_equal(const Tensor& a, const Tensor& b) {
  return a.dtype() == DType::kInt32 && b.dtype() == DType::kInt32 && a.shape() == b.shape() &&
         std::equal(a.data<int32_t>(), a.data<int32_t>() + a.numel(), b.data<int32_t>());
}

// Same type, shape and bytes, for tensors of any fixed-size element type.
inline bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         (a.nbytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0);
}

// Runs `cpu` on `in` without a pool and on `pool`, and `ref` once (both must run), and hands
// each of cpu's results with ref's to check(got, want).
template <class Check>
void check_against_reference(const NodeRunner& ref, const NodeRunner& cpu, const std::vector<Tensor>& in,
                             ThreadPool* pool, Check check) {
  ASSERT_TRUE(cpu.found());
  auto want = ref.run(in);
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), pool}) {
    auto got = cpu.run(in, p);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    check(*got, *want);
  }
}

// `cpu` on `in`, without a pool and on `pool`, gives the same bytes as `ref` (which must run).
inline void expect_same_as_reference(const NodeRunner& ref, const NodeRunner& cpu, const std::vector<Tensor>& in,
                                     ThreadPool* pool) {
  check_against_reference(ref, cpu, in, pool,
                          [](const Tensor& got, const Tensor& want) { EXPECT_TRUE(same_bytes(got, want)); });
}

// The same within tol * max(1, max |want|) (expect_close).
inline void expect_close_to_reference(const NodeRunner& ref, const NodeRunner& cpu, const std::vector<Tensor>& in,
                                      ThreadPool* pool, double tol) {
  check_against_reference(ref, cpu, in, pool,
                          [tol](const Tensor& got, const Tensor& want) { expect_close(got, want, tol); });
}

// Seeded values in [-1, 1) (random_tensor's) with signed zeros, NaN and infinities sprinkled in:
// the inputs on which an element-wise kernel must give the reference's bits.
inline Tensor awkward_tensor(const Shape& shape, uint32_t seed) {
  Tensor t = random_tensor(shape, seed);
  float* p = t.data<float>();
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (i % 41 == 7) p[i] = 0.0f;
    else if (i % 67 == 13) p[i] = -0.0f;
    else if (i % 89 == 3) p[i] = std::nanf("");
    else if (i % 97 == 11) p[i] = (i % 2) ? inf : -inf;
    else if (i % 31 == 5) p[i] *= 1e4f;
  }
  return t;
}

inline bool bit_equal(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         std::equal(a.data<float>(), a.data<float>() + a.numel(), b.data<float>(),
                    [](float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0; });
}

// A float32 tensor rounded to bfloat16 (nearest even), and a bfloat16 one widened to float32:
// the bf16 activations of fast mode's kernels and their float32 oracles.
inline Tensor rounded_to_bf16(const Tensor& t) {
  Tensor out(DType::kBFloat16, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) out.data<BFloat16>()[i] = BFloat16(t.data<float>()[i]);
  return out;
}
inline Tensor widened_to_f32(const Tensor& t) {
  Tensor out(DType::kFloat32, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) out.data<float>()[i] = static_cast<float>(t.data<BFloat16>()[i]);
  return out;
}

}  // namespace osprey::testing
