// onnxruntime's com.microsoft quantized ops of the QOperator format on the reference kernels
// (qoperator.cc, quantize.cc): values worked out by hand, broadcasting, saturation, and the
// errors for malformed inputs.
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

}  // namespace
}  // namespace osprey::testing
