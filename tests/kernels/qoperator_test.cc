// onnxruntime's com.microsoft quantized ops of the QOperator format on the reference kernels
// (qoperator.cc, qoperator_elementwise.cc, pool.cc): values worked out by hand, broadcasting,
// saturation, and the errors for malformed inputs. tests/zoo/test_qoperator_ops.py checks them
// against onnxruntime's own kernels.
#include <gtest/gtest.h>

#include <cmath>

#include "kernel_harness.h"

namespace osprey::testing {
namespace {

constexpr const char* kMs = "com.microsoft";

TEST(QOperatorKernels, QLinearGlobalAveragePoolMeansEachChannel) {
  // Channel 0: (10 + 20 + 30 + 40 - 4 * 10) * 0.5 / 4 / 0.25 = 30 -> 33; channel 1: 238.
  const Tensor x = vec<uint8_t>({10, 20, 30, 40, 0, 0, 255, 255}, {1, 2, 2, 2});
  const std::vector<Tensor> params = {fvec({0.5f}), vec<uint8_t>({10}), fvec({0.25f}), vec<uint8_t>({3})};
  auto y = run_single("QLinearGlobalAveragePool", 1, {x, params[0], params[1], params[2], params[3]}, {}, kMs);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  EXPECT_EQ(y->shape(), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{33, 238}));
  // The same values channels-last: [1, 2, 2, 2] with C last.
  const Tensor xcl = vec<uint8_t>({10, 0, 20, 0, 30, 255, 40, 255}, {1, 2, 2, 2});
  auto ycl = run_single("QLinearGlobalAveragePool", 1, {xcl, params[0], params[1], params[2], params[3]},
                        {{"channels_last", int_attr(1)}}, kMs);
  ASSERT_TRUE(ycl.ok()) << ycl.status().to_string();
  EXPECT_EQ(ycl->shape(), (Shape{1, 1, 1, 2}));
  EXPECT_EQ(values<uint8_t>(*ycl), (std::vector<uint8_t>{33, 238}));
  // int8 saturates: mean 110 / 0.5 = 220 -> 127.
  auto ys = run_single("QLinearGlobalAveragePool", 1,
                       {vec<int8_t>({100, 120}, {1, 1, 1, 2}), fvec({1.0f}), vec<int8_t>({0}), fvec({0.5f}), vec<int8_t>({0})},
                       {}, kMs);
  ASSERT_TRUE(ys.ok()) << ys.status().to_string();
  EXPECT_EQ(values<int8_t>(*ys), (std::vector<int8_t>{127}));
  // A zero point of another type than X is an error naming it.
  auto bad = run_single("QLinearGlobalAveragePool", 1, {x, params[0], vec<int8_t>({1}), params[2], params[3]}, {}, kMs);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().to_string().find("x_zero_point"), std::string::npos) << bad.status().to_string();
}

TEST(QOperatorKernels, QGemmScalesPerColumnAddsTheBiasAndQuantizes) {
  // (A - 1) = [[0, 1, 2], [3, 4, 5]], B = [[1, -1], [2, 0], [-3, 4]]: sums [[-4, 8], [-4, 17]];
  // scales 0.5 * [0.1, 0.2]; C = [10, -20] in the same units.
  const Tensor a = vec<uint8_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = vec<int8_t>({1, -1, 2, 0, -3, 4}, {3, 2});
  const Tensor bt = vec<int8_t>({1, 2, -3, -1, 0, 4}, {2, 3});
  const Tensor c = vec<int32_t>({10, -20});
  const std::vector<Tensor> in = {a, fvec({0.5f}), vec<uint8_t>({1}), b, fvec({0.1f, 0.2f}), vec<int8_t>({0, 0}), c};
  auto y = run_single("QGemm", 1, in, {}, kMs);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  expect_near(*y, {0.3, -1.2, 0.3, -0.3}, 1e-6);
  // alpha scales the product only; transB reads B transposed.
  std::vector<Tensor> in_t = in;
  in_t[3] = bt;
  auto y2 = run_single("QGemm", 1, in_t, {{"alpha", float_attr(2.0f)}, {"transB", int_attr(1)}}, kMs);
  ASSERT_TRUE(y2.ok()) << y2.status().to_string();
  expect_near(*y2, {0.1, -0.4, 0.1, 1.4}, 1e-6);
  // With y_scale 0.1 and y_zero_point 128: round(Y / 0.1) + 128.
  std::vector<Tensor> in_q = in;
  in_q.push_back(fvec({0.1f}));
  in_q.push_back(vec<uint8_t>({128}));
  auto yq = run_single("QGemm", 1, in_q, {}, kMs);
  ASSERT_TRUE(yq.ok()) << yq.status().to_string();
  EXPECT_EQ(yq->dtype(), DType::kUInt8);
  EXPECT_EQ(values<uint8_t>(*yq), (std::vector<uint8_t>{131, 116, 131, 125}));
  // Mismatched inner dimensions and a bias of the wrong type are errors naming them.
  std::vector<Tensor> bad = in;
  bad[3] = vec<int8_t>({1, 2, 3, 4}, {2, 2});
  auto r = run_single("QGemm", 1, bad, {}, kMs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("inner dimensions"), std::string::npos) << r.status().to_string();
  bad = in;
  bad[6] = fvec({1.0f, 2.0f});
  r = run_single("QGemm", 1, bad, {}, kMs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("C must be int32"), std::string::npos) << r.status().to_string();
}

TEST(QOperatorKernels, QLinearAddBroadcasts) {
  const Tensor a = vec<uint8_t>({0, 50, 100, 150, 200, 250}, {2, 3});
  const Tensor b = vec<uint8_t>({10, 128, 255}, {3});
  const float as = 0.02f, bs = 0.05f, ys = 0.1f;
  const int az = 100, bz = 128, yz = 60;
  auto y = run_single("QLinearAdd", 1,
                      {a, fvec({as}), vec<uint8_t>({static_cast<uint8_t>(az)}), b, fvec({bs}),
                       vec<uint8_t>({static_cast<uint8_t>(bz)}), fvec({ys}), vec<uint8_t>({static_cast<uint8_t>(yz)})},
                      {}, kMs);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  ASSERT_EQ(y->shape(), (Shape{2, 3}));
  const auto av = values<uint8_t>(a), bv = values<uint8_t>(b), got = values<uint8_t>(*y);
  for (int i = 0; i < 6; ++i) {
    const float s = static_cast<float>(av[i] - az) * as + static_cast<float>(bv[i % 3] - bz) * bs;
    const double want = std::clamp(std::nearbyint(s / ys) + yz, 0.0f, 255.0f);
    EXPECT_EQ(got[static_cast<size_t>(i)], static_cast<uint8_t>(want)) << "element " << i;
  }
  // The zero points are optional (0; C uint8).
  auto z = run_single("QLinearAdd", 1, {a, fvec({as}), Tensor(), b, fvec({bs}), Tensor(), fvec({ys}), Tensor()}, {}, kMs);
  ASSERT_TRUE(z.ok()) << z.status().to_string();
  ASSERT_EQ(z->dtype(), DType::kUInt8);
  const auto zv = values<uint8_t>(*z);
  for (int i = 0; i < 6; ++i) {
    const float s = static_cast<float>(av[i]) * as + static_cast<float>(bv[i % 3]) * bs;
    EXPECT_EQ(zv[static_cast<size_t>(i)], static_cast<uint8_t>(std::clamp(std::nearbyint(s / ys), 0.0f, 255.0f)));
  }
}

TEST(QOperatorKernels, QLinearMulRoundsTheScaledIntegerProduct) {
  // (A - 10) * (B - 2) * (0.5 * 0.25 / 0.1) + 3: [0 * 1, 10 * -2, 20 * 6] -> [3, -22, 153] -> int8 [3, -22, 127].
  const Tensor a = vec<int8_t>({10, 20, 30}, {3});
  const Tensor b = vec<int8_t>({3, 0, 8}, {3});
  auto y = run_single("QLinearMul", 1,
                      {a, fvec({0.5f}), vec<int8_t>({10}), b, fvec({0.25f}), vec<int8_t>({2}), fvec({0.1f}), vec<int8_t>({3})},
                      {}, kMs);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  EXPECT_EQ(values<int8_t>(*y), (std::vector<int8_t>{3, -22, 127}));
  // Without C's zero point, C takes A's type (int8 here), zero point 0.
  auto z = run_single("QLinearMul", 1, {a, fvec({0.5f}), vec<int8_t>({10}), b, fvec({0.25f}), vec<int8_t>({2}), fvec({0.1f})},
                      {}, kMs);
  ASSERT_TRUE(z.ok()) << z.status().to_string();
  EXPECT_EQ(z->dtype(), DType::kInt8);
  EXPECT_EQ(values<int8_t>(*z), (std::vector<int8_t>{0, -25, 127}));
  // A zero point of another type than its tensor is an error naming it.
  auto bad = run_single("QLinearMul", 1,
                        {a, fvec({0.5f}), vec<uint8_t>({10}), b, fvec({0.25f}), vec<int8_t>({2}), fvec({0.1f})}, {}, kMs);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().to_string().find("A_zero_point"), std::string::npos) << bad.status().to_string();
}

TEST(QOperatorKernels, TableActivationsQuantizeTheFloatFunction) {
  // x = (q - 128) * 0.1: q 98 -> -3, 128 -> 0, 158 -> 3.
  const Tensor x = vec<uint8_t>({98, 128, 158}, {3});
  auto s = run_single("QLinearSigmoid", 1, {x, fvec({0.1f}), vec<uint8_t>({128}), fvec({1.0f / 256}), vec<uint8_t>({0})},
                      {}, kMs);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  // sigmoid: 0.0474 * 256 = 12.14 -> 12; 0.5 -> 128; 0.9526 * 256 = 243.9 -> 244.
  EXPECT_EQ(values<uint8_t>(*s), (std::vector<uint8_t>{12, 128, 244}));
  auto l = run_single("QLinearLeakyRelu", 1, {x, fvec({0.1f}), vec<uint8_t>({128}), fvec({0.1f}), vec<uint8_t>({100})},
                      {{"alpha", float_attr(0.5f)}}, kMs);
  ASSERT_TRUE(l.ok()) << l.status().to_string();
  EXPECT_EQ(values<uint8_t>(*l), (std::vector<uint8_t>{85, 100, 130}));
}

TEST(QOperatorKernels, QLinearSoftmaxAndItsErrors) {
  // One row of [0, 0]: 0.5 each -> 128 with y_scale 1/256.
  const std::vector<Tensor> in = {vec<uint8_t>({7, 7}, {1, 2}), fvec({0.1f}), vec<uint8_t>({0}), fvec({1.0f / 256}),
                                  vec<uint8_t>({0})};
  auto y = run_single("QLinearSoftmax", 1, in, {{"opset", int_attr(13)}}, kMs);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{128, 128}));
  auto no_opset = run_single("QLinearSoftmax", 1, in, {}, kMs);
  ASSERT_FALSE(no_opset.ok());
  EXPECT_NE(no_opset.status().to_string().find("opset"), std::string::npos) << no_opset.status().to_string();
}

TEST(QOperatorKernels, QLinearConcatRequantizesEachInput) {
  // Output scale 0.5, zero point 10. Input 0 shares them (copied); input 1 (scale 1, zero
  // point 0) doubles: [3, 4] -> [16, 18].
  const std::vector<Tensor> in = {fvec({0.5f}), vec<uint8_t>({10}), vec<uint8_t>({1, 2}, {1, 2}), fvec({0.5f}),
                                  vec<uint8_t>({10}), vec<uint8_t>({3, 4}, {1, 2}), fvec({1.0f}), vec<uint8_t>({0})};
  auto y = run_single("QLinearConcat", 1, in, {{"axis", int_attr(1)}}, kMs);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  EXPECT_EQ(y->shape(), (Shape{1, 4}));
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{1, 2, 16, 18}));
  // Shapes that differ off the axis, and an incomplete triple, are errors naming them.
  std::vector<Tensor> bad = in;
  bad[5] = vec<uint8_t>({3, 4}, {2, 1});
  auto r = run_single("QLinearConcat", 1, bad, {{"axis", int_attr(1)}}, kMs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("off axis"), std::string::npos) << r.status().to_string();
  bad = in;
  bad.pop_back();
  r = run_single("QLinearConcat", 1, bad, {{"axis", int_attr(1)}}, kMs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("triples"), std::string::npos) << r.status().to_string();
}

TEST(QOperatorKernels, QLinearWhereChoosesAndRequantizes) {
  const Tensor c = vec<bool>({true, false}, {2});
  const std::vector<Tensor> in = {c, vec<uint8_t>({20, 20}, {2}), fvec({1.0f}), vec<uint8_t>({0}), vec<uint8_t>({5}, {1}),
                                  fvec({2.0f}), vec<uint8_t>({1}), fvec({4.0f}), vec<uint8_t>({100})};
  auto y = run_single("QLinearWhere", 1, in, {}, kMs);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  // 20 / 4 + 100 = 105; (5 - 1) * 2 / 4 + 100 = 102.
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{105, 102}));
}

TEST(QOperatorKernels, QLinearAveragePoolMeansWindowsInBothLayouts) {
  // One 2x2 window over x = (q - 10) * 0.5 = [0, 5, 10, 15]: mean 7.5 / 0.25 = 30, + 3 = 33.
  const std::vector<Tensor> in = {vec<uint8_t>({10, 20, 30, 40}, {1, 1, 2, 2}), fvec({0.5f}), vec<uint8_t>({10}),
                                  fvec({0.25f}), vec<uint8_t>({3})};
  auto y = run_single("QLinearAveragePool", 1, in, {{"kernel_shape", ints_attr({2, 2})}}, kMs);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  EXPECT_EQ(y->shape(), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{33}));
  // Channels-last, two channels [1, 2, 2, 2]: channel 0 as above, channel 1 all 10 -> 3.
  std::vector<Tensor> cl = in;
  cl[0] = vec<uint8_t>({10, 10, 20, 10, 30, 10, 40, 10}, {1, 2, 2, 2});
  auto ycl = run_single("QLinearAveragePool", 1, cl, {{"kernel_shape", ints_attr({2, 2})}, {"channels_last", int_attr(1)}},
                        kMs);
  ASSERT_TRUE(ycl.ok()) << ycl.status().to_string();
  EXPECT_EQ(ycl->shape(), (Shape{1, 1, 1, 2}));
  EXPECT_EQ(values<uint8_t>(*ycl), (std::vector<uint8_t>{33, 3}));
}

}  // namespace
}  // namespace osprey::testing
