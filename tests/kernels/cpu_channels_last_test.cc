// Channels-last FusedConv (channels_last = 1, X/Z/Y in [N, spatial..., C]) on oneDNN against the
// reference oracle, and against the NCHW FusedConv with its tensors transposed; and the oneDNN
// Transpose against the reference Transpose on every rank and awkward permutations.
#include <gtest/gtest.h>

#include <cstring>

#include <algorithm>
#include <numeric>
#include <random>

#include "cpu_test_harness.h"
#include "kernels/cpu/transpose_dnnl.h"

namespace osprey::testing {
namespace {

Tensor run_ref_transpose(const Tensor& x, const std::vector<int64_t>& perm) {
  NodeRunner ref("Transpose", "", 13, {{"perm", ints_attr(perm)}}, Device::ref);
  auto y = ref.run({x});
  EXPECT_TRUE(y.ok()) << y.status().to_string();
  return y.ok() ? *y : Tensor();
}

const std::vector<int64_t> kToLast = {0, 2, 3, 1}, kToFirst = {0, 3, 1, 2};

struct Case {
  const char* name;
  Shape x_nchw, w;
  Attrs attrs;
  bool bias, residual;
};

TEST(CpuChannelsLastConv, MatchesReferenceAndTheNchwConv) {
  const std::vector<Case> cases = {
      {"pointwise", {1, 16, 7, 7}, {24, 16, 1, 1}, {{"activation", string_attr("Relu")}}, true, false},
      {"3x3_stride2_pads_residual",
       {2, 5, 11, 9},
       {7, 5, 3, 3},
       {{"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 0})}},
       true,
       true},
      {"depthwise_clip",
       {1, 24, 10, 10},
       {24, 1, 3, 3},
       {{"group", int_attr(24)},
        {"pads", ints_attr({1, 1, 1, 1})},
        {"activation", string_attr("Clip")},
        {"activation_params", floats_attr({0.0f, 6.0f})}},
       false,
       false},
      {"grouped_dilated", {1, 8, 9, 9}, {8, 2, 3, 3}, {{"group", int_attr(4)}, {"dilations", ints_attr({2, 2})}}, true, true},
      // Strided 1x1 convolutions (ResNet's downsample; odd sizes: the last row and column are
      // skipped or read depending on the stride).
      {"pointwise_stride2_residual_relu",
       {2, 20, 11, 9},
       {36, 20, 1, 1},
       {{"strides", ints_attr({2, 2})}, {"activation", string_attr("Relu")}},
       true,
       true},
      {"pointwise_stride3x2_no_bias", {1, 17, 10, 7}, {5, 17, 1, 1}, {{"strides", ints_attr({3, 2})}}, false, false},
      {"pointwise_stride2_padded", {1, 8, 6, 6}, {8, 8, 1, 1}, {{"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 0, 0})}}, true, false},
  };
  ThreadPool pool2(2);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const Tensor x = random_tensor(c.x_nchw, 1), w = random_tensor(c.w, 2), b = random_tensor({c.w[0]}, 3);
    // The NCHW result (reference FusedConv) fixes Y's shape and Z's.
    Attrs nchw_attrs = c.attrs;
    NodeRunner nchw("FusedConv", "com.osprey", 1, nchw_attrs, Device::ref);
    auto y0 = nchw.run({x, w, c.bias ? b : Tensor()});
    ASSERT_TRUE(y0.ok()) << y0.status().to_string();
    const Tensor z = random_tensor(y0->shape(), 4);
    if (c.residual) {
      y0 = nchw.run({x, w, c.bias ? b : Tensor(), z});
      ASSERT_TRUE(y0.ok());
    }
    const Tensor want_nhwc = run_ref_transpose(*y0, kToLast);
    Attrs attrs = c.attrs;
    attrs["channels_last"] = int_attr(1);
    const std::vector<Tensor> in = {run_ref_transpose(x, kToLast), w, c.bias ? b : Tensor(),
                                    c.residual ? run_ref_transpose(z, kToLast) : Tensor()};
    NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
    auto want = ref.run(in);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    expect_close(*want, want_nhwc);
    NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
    ASSERT_TRUE(fast.prepare_status().ok()) << fast.prepare_status().to_string();
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      auto got = fast.run(in, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_EQ(got->shape(), want_nhwc.shape());
      expect_close(*got, want_nhwc);
    }
  }
}

TEST(CpuChannelsLastConv, BadAttributeAndMismatchedChannelsAreClearErrors) {
  const Tensor x = random_tensor({1, 6, 6, 4}, 1), w = random_tensor({8, 4, 3, 3}, 2);
  for (Device d : {Device::ref, Device::cpu}) {
    NodeRunner bad("FusedConv", "com.osprey", 1, {{"channels_last", int_attr(2)}}, d);
    auto r = bad.run({x, w});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("channels_last"), std::string::npos) << r.status().to_string();
  }
  // [1, 6, 6, 4] read as NCHW has 6 channels, which the weights (4 input channels) do not match.
  NodeRunner cl("FusedConv", "com.osprey", 1, {{"channels_last", int_attr(1)}}, Device::cpu);
  EXPECT_TRUE(cl.run({x, w}).ok());
  NodeRunner first("FusedConv", "com.osprey", 1, {}, Device::cpu);
  EXPECT_FALSE(first.run({x, w}).ok());
}

TEST(CpuTranspose, MatchesReferenceOnEveryRankAndPermutation) {
  ASSERT_NE(find_kernel("Transpose", "", 13, DType::kFloat32, false)->device, Device::ref);
  std::mt19937 rng(7);
  ThreadPool pool2(2);
  const std::vector<Shape> shapes = {{5}, {3, 7}, {2, 3, 5}, {1, 3, 224, 5}, {2, 16, 7, 9},
                                     {1, 12, 33, 64}, {2, 1, 3, 1, 4}, {2, 3, 1, 2, 3, 2}};
  for (const Shape& s : shapes) {
    std::vector<int64_t> perm(s.size());
    std::iota(perm.begin(), perm.end(), 0);
    for (int trial = 0; trial < 4; ++trial) {
      std::shuffle(perm.begin(), perm.end(), rng);
      SCOPED_TRACE(shape_to_string(s) + " perm " + shape_to_string(perm));
      const Tensor x = random_tensor(s, static_cast<uint32_t>(trial + 1));
      const Tensor want = run_ref_transpose(x, perm);
      NodeRunner fast("Transpose", "", 13, {{"perm", ints_attr(perm)}}, Device::cpu, {Tensor()});
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
        auto got = fast.run({x}, pool);
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        EXPECT_EQ(got->shape(), want.shape());
        EXPECT_TRUE(bit_equal(*got, want));
      }
    }
  }
}

TEST(CpuTranspose, BytesMatchTheReference) {
  // uint8 / int8 (a QDQ model's quantized input entering the channels-last layout, and back).
  ThreadPool pool2(2);
  for (DType t : {DType::kUInt8, DType::kInt8}) {
    for (const auto& [s, perm] : {std::pair{Shape{1, 3, 224, 224}, std::vector<int64_t>{0, 2, 3, 1}},
                                  std::pair{Shape{2, 7, 5, 24}, std::vector<int64_t>{0, 3, 1, 2}},
                                  std::pair{Shape{3, 5}, std::vector<int64_t>{1, 0}}}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " " + shape_to_string(s));
      Tensor x(t, s);
      for (int64_t i = 0; i < x.numel(); ++i) static_cast<uint8_t*>(x.raw_data())[i] = static_cast<uint8_t>(i * 37 + 11);
      auto want = run_single("Transpose", 13, {x}, {{"perm", ints_attr(perm)}});
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      NodeRunner fast("Transpose", "", 13, {{"perm", ints_attr(perm)}}, Device::cpu, {Tensor()}, t);
      ASSERT_TRUE(fast.found());
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
        auto got = fast.run({x}, pool);
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        ASSERT_EQ(got->dtype(), t);
        ASSERT_EQ(got->shape(), want->shape());
        EXPECT_EQ(std::memcmp(got->raw_data(), want->raw_data(), got->nbytes()), 0);
      }
    }
  }
}

TEST(CpuTranspose, FewChannelsToLastMatchesReference) {
  // [N, C, spatial...] -> [N, spatial..., C] with C <= 4 runs on interleave_planes; C = 5 and
  // other permutations stay on the reorder. Batches, odd extents, ranks 3 to 5, 1 and 2 threads.
  ThreadPool pool2(2);
  struct Case {
    Shape s;
    std::vector<int64_t> perm;
    bool interleaves;  // whether the kernel takes interleave_planes
  };
  const std::vector<Case> cases = {
      {{1, 3, 224, 224}, kToLast, true}, {{2, 3, 17, 9}, kToLast, true},
      {{3, 1, 5, 5}, kToLast, true},     {{2, 2, 33, 7}, kToLast, true},
      {{1, 4, 1, 1}, kToLast, true},     {{2, 5, 6, 7}, kToLast, false},
      {{2, 3, 1000}, {0, 2, 1}, true},   {{2, 3, 4, 5, 6}, {0, 2, 3, 4, 1}, true},
      {{2, 3, 4, 5}, {0, 3, 2, 1}, false}, {{0, 3, 4, 5}, kToLast, true},
      {{2, 3, 4, 5}, {1, 2, 3, 0}, false}, {{3, 4}, {1, 0}, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_to_string(c.s) + " perm " + shape_to_string(c.perm));
    EXPECT_EQ(cpu::transpose_interleaves(c.s, c.perm), c.interleaves);
    const Tensor x = random_tensor(c.s, 5);
    const Tensor want = run_ref_transpose(x, c.perm);
    NodeRunner fast("Transpose", "", 13, {{"perm", ints_attr(c.perm)}}, Device::cpu, {Tensor()});
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      auto got = fast.run({x}, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_EQ(got->shape(), want.shape());
      EXPECT_TRUE(bit_equal(*got, want));
    }
  }
}

TEST(CpuTranspose, DefaultPermScalarEmptyAndBadPerm) {
  const Tensor x = random_tensor({2, 3, 4}, 3);
  NodeRunner reverse("Transpose", "", 13, {}, Device::cpu);
  auto r = reverse.run({x});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(bit_equal(*r, run_ref_transpose(x, {2, 1, 0})));
  NodeRunner none("Transpose", "", 13, {}, Device::cpu);
  auto s = none.run({Tensor::scalar(4.5f)});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->rank(), 0);
  EXPECT_EQ(s->data<float>()[0], 4.5f);
  auto e = none.run({Tensor(DType::kFloat32, {0, 3})});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->shape(), (Shape{3, 0}));
  NodeRunner dup("Transpose", "", 13, {{"perm", ints_attr({0, 0, 1})}}, Device::cpu);
  auto d = dup.run({x});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("permutation"), std::string::npos);
}

}  // namespace
}  // namespace osprey::testing
