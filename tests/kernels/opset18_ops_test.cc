// The reference kernels of opsets 18-22 beyond what the ONNX node cases check: oracles built
// from other ops (DeformConv with zero offsets is Conv, rfft then irfft is the identity, an
// identity AffineGrid sampled by GridSample is the input), hand-computed values, and the
// errors of bad attributes and shapes.
#include <cmath>
#include <string>
#include <vector>

#include "kernel_harness.h"

namespace osprey::testing {
namespace {

std::vector<float> floats_of(const Tensor& t) { return values<float>(t); }

TEST(Opset18Resize, AxesResizeOnlyTheListedAxes) {
  // [1, 1, 2, 4] halved along axis 3 only (scales name one axis).
  const Tensor x = iota(8, {1, 1, 2, 4});
  auto y = run_single("Resize", 18, {x, Tensor(), fvec({0.5f})},
                      {{"mode", string_attr("nearest")}, {"axes", ints_attr({3})}});
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  EXPECT_EQ(y->shape(), (Shape{1, 1, 2, 2}));
  // half_pixel and round_prefer_floor: output j reads input 2j + 0.5 -> 2j (floor on ties).
  EXPECT_EQ(floats_of(*y), (std::vector<float>{0, 2, 4, 6}));
  expect_invalid(run_single("Resize", 18, {x, Tensor(), fvec({0.5f, 0.5f})},
                            {{"mode", string_attr("nearest")}, {"axes", ints_attr({3, -1})}}),
                 "twice");
  expect_invalid(run_single("Resize", 18, {x, Tensor(), fvec({0.5f})},
                            {{"mode", string_attr("nearest")}, {"axes", ints_attr({4})}}),
                 "out of range");
}

TEST(Opset18Resize, KeepAspectRatioPolicyScalesBothAxesAlike) {
  const Tensor x = iota(2 * 4, {1, 1, 2, 4});
  // Target 4 x 4: not_larger takes min(4/2, 4/4) = 1 -> [2, 4]; not_smaller takes 2 -> [4, 8].
  for (const auto& [policy, want] : std::vector<std::pair<std::string, Shape>>{
           {"not_larger", {1, 1, 2, 4}}, {"not_smaller", {1, 1, 4, 8}}}) {
    auto y = run_single("Resize", 18, {x, Tensor(), Tensor(), vec<int64_t>({4, 4})},
                        {{"mode", string_attr("nearest")},
                         {"axes", ints_attr({2, 3})},
                         {"keep_aspect_ratio_policy", string_attr(policy)}});
    ASSERT_TRUE(y.ok()) << y.status().to_string();
    EXPECT_EQ(y->shape(), want) << policy;
  }
  expect_invalid(run_single("Resize", 18, {x, Tensor(), Tensor(), vec<int64_t>({1, 1, 4, 4})},
                            {{"keep_aspect_ratio_policy", string_attr("fit")}}),
                 "keep_aspect_ratio_policy");
}

TEST(Opset18Resize, AntialiasAveragesWhenShrinkingAndNewModesNeedTheirOpset) {
  // Linear, antialiased, 4 -> 1 along the last axis: the triangle filter stretched 4 times
  // spans 8 taps around the source coordinate 1.5, at distances +-0.125, +-0.375, +-0.625,
  // +-0.875 (scaled), weights 0.875, 0.625, 0.375, 0.125 on each side, normalized by their
  // sum 4; the taps past the ends read the edge (as the ONNX reference pads). Inputs 0..3
  // get 1.125, 0.875, 0.875, 1.125: the mean of 0, 1, 2, 3 = 1.5.
  const Tensor x = iota(4, {1, 4});
  auto y = run_single("Resize", 18, {x, Tensor(), fvec({1.0f, 0.25f})},
                      {{"mode", string_attr("linear")}, {"antialias", int_attr(1)}});
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  expect_near(*y, {1.5});
  // A lopsided signal tells the two apart: plain linear reads only inputs 1 and 2.
  const Tensor z = fvec({0, 0, 0, 8}, {1, 4});
  auto plain = run_single("Resize", 18, {z, Tensor(), fvec({1.0f, 0.25f})}, {{"mode", string_attr("linear")}});
  auto aa = run_single("Resize", 18, {z, Tensor(), fvec({1.0f, 0.25f})},
                       {{"mode", string_attr("linear")}, {"antialias", int_attr(1)}});
  ASSERT_TRUE(plain.ok() && aa.ok());
  expect_near(*plain, {0.0});
  expect_near(*aa, {8 * 1.125 / 4});
  expect_invalid(run_single("Resize", 18, {x, Tensor(), fvec({1.0f, 0.5f})},
                            {{"mode", string_attr("linear")}, {"antialias", int_attr(2)}}),
                 "antialias");
  expect_invalid(run_single("Resize", 18, {x, Tensor(), fvec({1.0f, 0.5f})},
                            {{"coordinate_transformation_mode", string_attr("half_pixel_symmetric")}}),
                 "half_pixel_symmetric");
  EXPECT_TRUE(run_single("Resize", 19, {x, Tensor(), fvec({1.0f, 0.5f})},
                         {{"coordinate_transformation_mode", string_attr("half_pixel_symmetric")}})
                  .ok());
}

TEST(Opset18Norms, GroupNormalizationPerGroupAndPerChannelParameters) {
  // One group over 2 channels x 2 positions: 1, 2, 3, 4 -> mean 2.5, variance 1.25.
  const Tensor x = fvec({1, 2, 3, 4}, {1, 2, 2});
  const double inv = 1.0 / std::sqrt(1.25 + 1e-5);
  auto y18 = run_single("GroupNormalization", 18, {x, fvec({2.0f}), fvec({1.0f})}, {{"num_groups", int_attr(1)}});
  ASSERT_TRUE(y18.ok()) << y18.status().to_string();
  expect_near(*y18, {1 - 3 * inv, 1 - inv, 1 + inv, 1 + 3 * inv});
  auto y21 = run_single("GroupNormalization", 21, {x, fvec({1.0f, 2.0f}), fvec({0.0f, 1.0f})},
                        {{"num_groups", int_attr(1)}});
  ASSERT_TRUE(y21.ok()) << y21.status().to_string();
  expect_near(*y21, {-1.5 * inv, -0.5 * inv, 1 + inv, 1 + 3 * inv});
  expect_invalid(run_single("GroupNormalization", 21, {x, fvec({1.0f}), fvec({0.0f})}, {{"num_groups", int_attr(1)}}),
                 "scale");
  expect_invalid(run_single("GroupNormalization", 18, {x, fvec({1, 1, 1}), fvec({0, 0, 0})},
                            {{"num_groups", int_attr(3)}}),
                 "num_groups");
}

TEST(Opset18Norms, LpNormalizationL1L2AndZeroRows) {
  const Tensor x = fvec({3, -4, 0, 0}, {2, 2});
  auto l2 = run_single("LpNormalization", 22, {x}, {{"p", int_attr(2)}});
  auto l1 = run_single("LpNormalization", 22, {x}, {{"p", int_attr(1)}});
  ASSERT_TRUE(l2.ok() && l1.ok());
  expect_near(*l2, {0.6, -0.8, 0, 0});
  expect_near(*l1, {3.0 / 7, -4.0 / 7, 0, 0});
  auto cols = run_single("LpNormalization", 1, {x}, {{"axis", int_attr(0)}});
  ASSERT_TRUE(cols.ok());
  expect_near(*cols, {1, -1, 0, 0});
  expect_invalid(run_single("LpNormalization", 22, {x}, {{"p", int_attr(3)}}), "p must be 1 or 2");
}

TEST(Opset19DeformConv, ZeroOffsetsAreAPlainConvolution) {
  const Tensor x = random_tensor({1, 4, 6, 5}, 1), w = random_tensor({6, 2, 3, 3}, 2), b = random_tensor({6}, 3);
  const Attrs attrs = {{"group", int_attr(2)}, {"pads", ints_attr({1, 0, 1, 1})}, {"strides", ints_attr({2, 1})},
                       {"dilations", ints_attr({1, 2})}};
  auto conv = run_single("Conv", 11, {x, w, b}, attrs);
  ASSERT_TRUE(conv.ok()) << conv.status().to_string();
  Tensor off(DType::kFloat32, {1, 2 * 2 * 9, conv->dim(2), conv->dim(3)});  // zeros, offset_group 2
  Attrs dattrs = attrs;
  dattrs["offset_group"] = int_attr(2);
  auto deform = run_single("DeformConv", 19, {x, w, off, b}, dattrs);
  ASSERT_TRUE(deform.ok()) << deform.status().to_string();
  ASSERT_EQ(deform->shape(), conv->shape());
  for (int64_t i = 0; i < conv->numel(); ++i) EXPECT_NEAR(deform->data<float>()[i], conv->data<float>()[i], 1e-5) << i;
  // A whole-pixel offset of +1 along x reads the next column (the last reads zeros).
  const Tensor x1 = iota(4, {1, 1, 1, 4}), w1 = fvec({1.0f}, {1, 1, 1, 1});
  Tensor shift(DType::kFloat32, {1, 2, 1, 4});
  for (int i = 0; i < 4; ++i) shift.data<float>()[4 + i] = 1.0f;
  auto shifted = run_single("DeformConv", 19, {x1, w1, shift});
  ASSERT_TRUE(shifted.ok()) << shifted.status().to_string();
  expect_near(*shifted, {1, 2, 3, 0});
  expect_invalid(run_single("DeformConv", 19, {random_tensor({1, 1, 2, 2, 2}, 4), random_tensor({1, 1, 1, 1, 1}, 5),
                                               random_tensor({1, 3, 2, 2, 2}, 6)}),
                 "2-D");
  expect_invalid(run_single("DeformConv", 19, {x1, w1, Tensor(DType::kFloat32, {1, 2, 1, 3})}), "offset");
  expect_invalid(run_single("DeformConv", 19, {x1, w1, shift}, {{"pads", ints_attr({0, int64_t{1} << 62, 0, 0})}}),
                 "too large");
}

TEST(Opset18Col2Im, OverlapsAddUp) {
  // All-ones columns of 2x2 blocks over a 3x3 image, stride 1: each pixel gets one value per
  // block covering it.
  Tensor cols(DType::kFloat32, {1, 4, 4});
  for (int64_t i = 0; i < cols.numel(); ++i) cols.data<float>()[i] = 1.0f;
  auto y = run_single("Col2Im", 18, {cols, vec<int64_t>({3, 3}), vec<int64_t>({2, 2})});
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  EXPECT_EQ(y->shape(), (Shape{1, 1, 3, 3}));
  expect_near(*y, {1, 2, 1, 2, 4, 2, 1, 2, 1});
  expect_invalid(run_single("Col2Im", 18, {cols, vec<int64_t>({3, 4}), vec<int64_t>({2, 2})}), "block positions");
  expect_invalid(run_single("Col2Im", 18, {cols, vec<int64_t>({3, 3}), vec<int64_t>({2})}), "same");
  expect_invalid(run_single("Col2Im", 18, {cols, vec<int64_t>({int64_t{1} << 62, 3}), vec<int64_t>({2, 2})}),
                 "too large");
}

TEST(Opset18CenterCropPad, CropsAndPadsAroundTheCentre) {
  const Tensor x = iota(5, {5});
  auto crop = run_single("CenterCropPad", 18, {x, vec<int64_t>({2})});
  auto pad = run_single("CenterCropPad", 18, {x, vec<int64_t>({8})});
  ASSERT_TRUE(crop.ok() && pad.ok());
  EXPECT_EQ(floats_of(*crop), (std::vector<float>{1, 2}));  // (5 - 2) / 2 = 1 cropped first
  EXPECT_EQ(floats_of(*pad), (std::vector<float>{0, 0, 1, 2, 3, 4, 0, 0}));  // 1 padded first
  expect_invalid(run_single("CenterCropPad", 18, {x, vec<int64_t>({2, 2})}), "axes");
}

TEST(Opset20Grids, IdentityAffineGridSampledByGridSampleIsTheInput) {
  // 3-D: theta = [I | 0]; GridSample-20 (N-D, mode "linear") at those points gives x back.
  const Tensor x = random_tensor({1, 2, 3, 4, 5}, 7);
  Tensor theta(DType::kFloat32, {1, 3, 4});
  for (int i = 0; i < 3; ++i) theta.data<float>()[i * 4 + i] = 1.0f;
  for (int64_t align : {0, 1}) {
    auto grid = run_single("AffineGrid", 20, {theta, vec<int64_t>({1, 2, 3, 4, 5})}, {{"align_corners", int_attr(align)}});
    ASSERT_TRUE(grid.ok()) << grid.status().to_string();
    EXPECT_EQ(grid->shape(), (Shape{1, 3, 4, 5, 3}));
    auto y = run_single("GridSample", 20, {x, *grid}, {{"align_corners", int_attr(align)}});
    ASSERT_TRUE(y.ok()) << y.status().to_string();
    for (int64_t i = 0; i < x.numel(); ++i) EXPECT_NEAR(y->data<float>()[i], x.data<float>()[i], 1e-5) << i;
  }
  // Opset 16 names the mode bilinear and takes 4-D input only; 20 says linear.
  expect_invalid(run_single("GridSample", 16, {x, random_tensor({1, 3, 4, 5, 3}, 8)}), "rank");
  expect_invalid(run_single("GridSample", 20, {random_tensor({1, 1, 2, 2}, 9), random_tensor({1, 2, 2, 2}, 10)},
                            {{"mode", string_attr("bilinear")}}),
                 "mode");
  expect_invalid(run_single("GridSample", 20, {x, random_tensor({1, 3, 4, 5, 3}, 11)}, {{"mode", string_attr("cubic")}}),
                 "4-D");
}

TEST(Opset20Dft, InverseOfAHalfSpectrumIsTheRealSignal) {
  const Tensor signal = random_tensor({1, 6, 1}, 12);
  Tensor axis(DType::kInt64, {});
  axis.data<int64_t>()[0] = 1;
  auto half = run_single("DFT", 20, {signal, Tensor(), axis}, {{"onesided", int_attr(1)}});
  ASSERT_TRUE(half.ok()) << half.status().to_string();
  EXPECT_EQ(half->shape(), (Shape{1, 4, 2}));
  auto back = run_single("DFT", 20, {*half, Tensor(), axis}, {{"onesided", int_attr(1)}, {"inverse", int_attr(1)}});
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->shape(), (Shape{1, 6, 1}));
  for (int64_t i = 0; i < 6; ++i) EXPECT_NEAR(back->data<float>()[i], signal.data<float>()[i], 1e-5) << i;
  expect_invalid(run_single("DFT", 20, {signal, Tensor(), axis}, {{"axis", int_attr(1)}}), "input 2");
}

TEST(Opset21Quantize, BlockedScalesApplyPerBlockAlongTheAxis) {
  // x [2, 4] in blocks of 2 along axis 1: scale [2, 2].
  const Tensor x = fvec({1, 2, 30, 40, -1, -2, -30, -40}, {2, 4});
  const Tensor scale = fvec({1, 10, 1, 10}, {2, 2});
  auto q = run_single("QuantizeLinear", 21, {x, scale, vec<int8_t>({0, 0, 0, 0}, {2, 2})},
                      {{"axis", int_attr(1)}, {"block_size", int_attr(2)}});
  ASSERT_TRUE(q.ok()) << q.status().to_string();
  EXPECT_EQ(values<int8_t>(*q), (std::vector<int8_t>{1, 2, 3, 4, -1, -2, -3, -4}));
  auto dq = run_single("DequantizeLinear", 21, {*q, scale, vec<int8_t>({0, 0, 0, 0}, {2, 2})},
                       {{"axis", int_attr(1)}, {"block_size", int_attr(2)}});
  ASSERT_TRUE(dq.ok()) << dq.status().to_string();
  expect_near(*dq, {1, 2, 30, 40, -1, -2, -30, -40});
  expect_invalid(run_single("QuantizeLinear", 21, {x, fvec({1, 1, 1, 1, 1, 1}, {2, 3})},
                            {{"axis", int_attr(1)}, {"block_size", int_attr(2)}}),
                 "blocks of 2");
  // 16-bit outputs from opset 21 only.
  auto q16 = run_single("QuantizeLinear", 21, {x, fvec({0.5f}), vec<int16_t>({0})});
  ASSERT_TRUE(q16.ok()) << q16.status().to_string();
  EXPECT_EQ(values<int16_t>(*q16), (std::vector<int16_t>{2, 4, 60, 80, -2, -4, -60, -80}));
  expect_invalid(run_single("QuantizeLinear", 19, {x, fvec({0.5f}), vec<int16_t>({0})}), "int16");
}

TEST(Opset18Bitwise, IntegerOpsBroadcast) {
  const Tensor a = vec<int32_t>({0b1100, 0b1010}), b = vec<int32_t>({0b0110});
  auto band = run_single("BitwiseAnd", 18, {a, b});
  auto bxor = run_single("BitwiseXor", 18, {a, b});
  auto bnot = run_single("BitwiseNot", 18, {vec<uint8_t>({0, 0xF0})});
  ASSERT_TRUE(band.ok() && bxor.ok() && bnot.ok());
  EXPECT_EQ(values<int32_t>(*band), (std::vector<int32_t>{0b0100, 0b0010}));
  EXPECT_EQ(values<int32_t>(*bxor), (std::vector<int32_t>{0b1010, 0b1100}));
  EXPECT_EQ(values<uint8_t>(*bnot), (std::vector<uint8_t>{0xFF, 0x0F}));
  EXPECT_FALSE(run_single("BitwiseOr", 18, {a, vec<int64_t>({1})}).ok());  // mixed types
}

TEST(Opset20Strings, SplitLikePythonAndConcatBroadcasts) {
  const Tensor s = vec<std::string>({"a  b c", " x ", "p,q,,r"});
  auto ws = run_kernel("StringSplit", 20, {s}, {{"maxsplit", int_attr(1)}}, 2);
  ASSERT_TRUE(ws.ok()) << ws.status().to_string();
  EXPECT_EQ((*ws)[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values<std::string>((*ws)[0]), (std::vector<std::string>{"a", "b c", "x", "", "p,q,,r", ""}));
  EXPECT_EQ(values<int64_t>((*ws)[1]), (std::vector<int64_t>{2, 1, 1}));
  auto comma = run_kernel("StringSplit", 20, {s}, {{"delimiter", string_attr(",")}}, 2);
  ASSERT_TRUE(comma.ok());
  EXPECT_EQ(values<int64_t>((*comma)[1]), (std::vector<int64_t>{1, 1, 4}));
  auto cat = run_single("StringConcat", 20, {s, vec<std::string>({"!"})});
  ASSERT_TRUE(cat.ok());
  EXPECT_EQ(values<std::string>(*cat), (std::vector<std::string>{"a  b c!", " x !", "p,q,,r!"}));
}

TEST(Opset20Reduce, MaxAndMinOverBoolAreAnyAndAll) {
  const Tensor b = vec<bool>({true, false, false, false}, {2, 2});
  auto any = run_single("ReduceMax", 20, {b, vec<int64_t>({1})});
  auto all = run_single("ReduceMin", 20, {b, vec<int64_t>({1})});
  ASSERT_TRUE(any.ok() && all.ok()) << any.status().to_string();
  EXPECT_EQ(values<bool>(*any), (std::vector<bool>{true, false}));
  EXPECT_EQ(values<bool>(*all), (std::vector<bool>{false, false}));
  EXPECT_FALSE(run_single("ReduceMax", 18, {b, vec<int64_t>({1})}).ok());  // bool from opset 20
}

TEST(Opset20Gelu, OnnxGeluTakesEveryFloatType) {
  Tensor x(DType::kFloat64, {3});
  const double in[3] = {-1.0, 0.0, 2.0};
  for (int i = 0; i < 3; ++i) x.data<double>()[i] = in[i];
  auto y = run_single("Gelu", 20, {x});
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(y->data<double>()[i], 0.5 * in[i] * (1 + std::erf(in[i] / std::sqrt(2.0))), 1e-12);
  expect_invalid(run_single("Gelu", 20, {x}, {{"approximate", string_attr("fast")}}), "approximate");
}

}  // namespace
}  // namespace osprey::testing
