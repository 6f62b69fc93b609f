// ONNX QLinearMatMul's CPU kernel (float GEMM on the zero-point-shifted bytes, whose sums are
// exact up to K = 256) against the reference: equal bit for bit, with uint8 and int8 operands,
// extreme bytes at K = 256, broadcast batch dims, one and two threads, and scales that change
// between runs; K = 257 and per-row scales run on the reference (still equal).
#include <gtest/gtest.h>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

bool bytes_equal(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         std::equal(static_cast<const uint8_t*>(a.raw_data()), static_cast<const uint8_t*>(a.raw_data()) + a.nbytes(),
                    static_cast<const uint8_t*>(b.raw_data()));
}

// A tensor of one byte value repeated.
Tensor filled(DType t, Shape shape, int v) {
  Tensor r(t, std::move(shape));
  for (int64_t i = 0; i < r.numel(); ++i) {
    if (t == DType::kInt8) r.data<int8_t>()[i] = static_cast<int8_t>(v);
    else r.data<uint8_t>()[i] = static_cast<uint8_t>(v);
  }
  return r;
}

struct Case {
  const char* what;
  Tensor a, b;
  int a_zp, b_zp;
  DType y_type;
  Tensor a_scale = fvec({0.02f});
};

void expect_equal_to_reference(const Case& c) {
  static ThreadPool pool2(2);
  SCOPED_TRACE(c.what);
  const std::vector<Tensor> in = {c.a, c.a_scale, byte_scalar(c.a.dtype(), c.a_zp), c.b, fvec({0.013f}),
                                  byte_scalar(c.b.dtype(), c.b_zp), fvec({0.9f}), byte_scalar(c.y_type, c.y_type == DType::kInt8 ? -4 : 120)};
  NodeRunner ref("QLinearMatMul", "", 10, {}, Device::ref, {}, c.a.dtype());
  auto want = ref.run(in);
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
    NodeRunner cpu("QLinearMatMul", "", 10, {}, Device::cpu, {}, c.a.dtype());
    ASSERT_TRUE(cpu.found());
    ASSERT_TRUE(cpu.prepare_status().ok()) << cpu.prepare_status().to_string();
    for (int rep = 0; rep < 2; ++rep) {
      auto got = cpu.run(in, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_TRUE(bytes_equal(*got, *want)) << "run " << rep;
    }
    // Another y_scale on the same node (a cached product must not keep the old one).
    std::vector<Tensor> in2 = in;
    in2[6] = fvec({0.37f});
    auto want2 = ref.run(in2);
    auto got2 = cpu.run(in2, pool);
    ASSERT_TRUE(want2.ok() && got2.ok());
    EXPECT_TRUE(bytes_equal(*got2, *want2)) << "after a new y_scale";
  }
}

TEST(CpuQLinearMatMul, EqualsTheReference) {
  const std::vector<Case> cases = {
      // Attention's products: [1, heads, seq, head] x [1, heads, head, seq] and back.
      {"scores", random_bytes(DType::kUInt8, {1, 4, 32, 16}, 1), random_bytes(DType::kUInt8, {1, 4, 16, 32}, 2), 121, 133,
       DType::kUInt8},
      {"probabilities x values", random_bytes(DType::kUInt8, {1, 4, 32, 32}, 3), random_bytes(DType::kInt8, {1, 4, 32, 16}, 4),
       0, -3, DType::kInt8},
      {"int8 operands, broadcast B", random_bytes(DType::kInt8, {3, 2, 5, 24}, 5), random_bytes(DType::kInt8, {2, 24, 7}, 6),
       -7, 9, DType::kUInt8},
      // The largest exact sum: K = 256 products of 255 x 255 (and of -255 x -255 ... mixed signs).
      {"K 256 at the extremes", filled(DType::kUInt8, {2, 3, 256}, 255), filled(DType::kUInt8, {256, 4}, 255), 0, 0,
       DType::kUInt8},
      {"K 256, both signs", filled(DType::kInt8, {2, 256}, -128), filled(DType::kInt8, {256, 3}, 127), 127, -128,
       DType::kInt8},
      {"K 257 (reference)", random_bytes(DType::kUInt8, {3, 257}, 7), random_bytes(DType::kUInt8, {257, 5}, 8), 128, 128,
       DType::kUInt8},
      {"per-row a_scale (reference)", random_bytes(DType::kUInt8, {3, 8}, 9), random_bytes(DType::kUInt8, {8, 5}, 10), 100, 90,
       DType::kUInt8, fvec({0.01f, 0.02f, 0.03f})},
  };
  for (const auto& c : cases) expect_equal_to_reference(c);
}

}  // namespace
}  // namespace osprey::testing
