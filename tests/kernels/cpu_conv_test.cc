// Fast CPU Conv / FusedConv (oneDNN) against the reference kernels: awkward shapes, thread
// counts 1 and 2, prepared (constant weights) and unprepared (computed weights) nodes, the
// per-shape cache, weights overridden at run time, and concurrent runs on one node.
#include <gtest/gtest.h>

#include <thread>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

struct ConvCase {
  const char* name;
  Shape x, w;
  bool bias;
  Attrs attrs;
};

std::vector<ConvCase> conv_cases() {
  return {
      {"1x1", {1, 16, 7, 7}, {32, 16, 1, 1}, true, {}},
      {"3x3_stride2_odd",
       {2, 5, 11, 9},
       {7, 5, 3, 3},
       true,
       {{"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}}},
      {"depthwise",
       {1, 24, 10, 10},
       {24, 1, 3, 3},
       true,
       {{"group", int_attr(24)}, {"pads", ints_attr({1, 1, 1, 1})}}},
      {"groups", {3, 6, 8, 8}, {4, 3, 3, 3}, false, {{"group", int_attr(2)}}},
      {"asymmetric_pads", {1, 3, 9, 8}, {17, 3, 3, 2}, true, {{"pads", ints_attr({0, 1, 2, 0})}}},
      {"dilated", {1, 4, 13, 13}, {6, 4, 3, 3}, false, {{"dilations", ints_attr({2, 3})}}},
      {"same_upper",
       {1, 3, 10, 7},
       {5, 3, 4, 3},
       true,
       {{"auto_pad", string_attr("SAME_UPPER")}, {"strides", ints_attr({2, 2})}}},
      {"same_lower", {1, 3, 10, 7}, {5, 3, 4, 3}, false, {{"auto_pad", string_attr("SAME_LOWER")}}},
      {"valid", {2, 3, 6, 6}, {2, 3, 3, 3}, true, {{"auto_pad", string_attr("VALID")}}},
      {"size1", {1, 1, 1, 1}, {1, 1, 1, 1}, true, {}},
      {"conv1d", {2, 5, 17}, {3, 5, 4}, true, {{"strides", ints_attr({3})}}},
      {"conv3d", {1, 2, 5, 6, 4}, {3, 2, 2, 3, 2}, true, {{"pads", ints_attr({1, 0, 1, 0, 1, 0})}}},
      {"wide_channels", {1, 35, 6, 6}, {19, 35, 3, 3}, true, {{"pads", ints_attr({1, 1, 1, 1})}}},
  };
}

Tensor bias_for(const ConvCase& c, uint32_t seed) {
  return c.bias ? random_tensor({c.w[0]}, seed) : Tensor();
}

TEST(CpuConv, Registered) {
  const KernelDef* k = find_kernel("Conv", "", 11, DType::kFloat32, false);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->device, Device::cpu);
  EXPECT_NE(k->prepare, nullptr);
  // Other element types go to the reference kernel.
  const KernelDef* d = find_kernel("Conv", "", 11, DType::kFloat64, false);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->device, Device::ref);
}

TEST(CpuConv, MatchesReferenceOnAwkwardShapes) {
  ThreadPool pool2(2);
  uint32_t seed = 1;
  for (const auto& c : conv_cases()) {
    SCOPED_TRACE(c.name);
    const Tensor x = random_tensor(c.x, seed++), w = random_tensor(c.w, seed++);
    const Tensor b = bias_for(c, seed++);
    NodeRunner ref("Conv", "", 11, c.attrs, Device::ref);
    auto want = ref.run({x, w, b});
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    NodeRunner prepared("Conv", "", 11, c.attrs, Device::cpu, {Tensor(), w, b});
    ASSERT_TRUE(prepared.found());
    ASSERT_TRUE(prepared.prepare_status().ok());
    NodeRunner computed("Conv", "", 11, c.attrs, Device::cpu);  // weights are not constant
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      for (const NodeRunner* r : {&prepared, &computed}) {
        auto got = r->run({x, w, b}, pool);
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        expect_close(*got, *want);
      }
    }
  }
}

TEST(CpuConv, CacheServesSeveralInputShapes) {
  const Attrs attrs = {{"pads", ints_attr({1, 1, 1, 1})}, {"strides", ints_attr({2, 1})}};
  const Tensor w = random_tensor({8, 3, 3, 3}, 7), b = random_tensor({8}, 8);
  NodeRunner fast("Conv", "", 11, attrs, Device::cpu, {Tensor(), w, b});
  NodeRunner ref("Conv", "", 11, attrs, Device::ref);
  uint32_t seed = 20;
  for (Shape s :
       {Shape{1, 3, 10, 10}, Shape{2, 3, 15, 7}, Shape{1, 3, 10, 10}, Shape{1, 3, 3, 3}}) {
    const Tensor x = random_tensor(s, seed++);
    auto got = fast.run({x, w, b});
    auto want = ref.run({x, w, b});
    ASSERT_TRUE(got.ok() && want.ok());
    expect_close(*got, *want);
  }
}

TEST(CpuConv, WeightsOverriddenAtRunTimeAreUsed) {
  const Tensor w = random_tensor({4, 3, 3, 3}, 1), other = random_tensor({4, 3, 3, 3}, 2);
  const Tensor x = random_tensor({1, 3, 6, 6}, 3);
  NodeRunner fast("Conv", "", 11, {}, Device::cpu, {Tensor(), w});
  NodeRunner ref("Conv", "", 11, {}, Device::ref);
  auto first = fast.run({x, w});
  auto second = fast.run({x, other});
  ASSERT_TRUE(first.ok() && second.ok());
  expect_close(*first, *ref.run({x, w}));
  expect_close(*second, *ref.run({x, other}));
}

TEST(CpuConv, ConcurrentRunsOnOnePreparedNodeAgree) {
  const Attrs attrs = {{"pads", ints_attr({1, 1, 1, 1})}};
  const Tensor w = random_tensor({16, 8, 3, 3}, 4), b = random_tensor({16}, 5);
  const Tensor x = random_tensor({2, 8, 12, 12}, 6);
  NodeRunner fast("Conv", "", 11, attrs, Device::cpu, {Tensor(), w, b});
  ThreadPool pool(2);
  auto first = fast.run({x, w, b}, &pool);
  ASSERT_TRUE(first.ok());
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        auto r = fast.run({x, w, b}, &pool);
        if (!r.ok() || !bit_equal(*r, *first)) ++mismatches[static_cast<size_t>(t)];
      }
    });
  for (auto& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

TEST(CpuConv, BadInputsAreClearErrors) {
  NodeRunner fast("Conv", "", 11, {{"group", int_attr(2)}}, Device::cpu);
  auto r = fast.run({random_tensor({1, 3, 5, 5}, 1), random_tensor({4, 3, 3, 3}, 2)});
  expect_invalid(r, "group 2");
  NodeRunner big_kernel("Conv", "", 11, {}, Device::cpu);
  expect_invalid(big_kernel.run({random_tensor({1, 1, 2, 2}, 1), random_tensor({1, 1, 3, 3}, 2)}),
                 "larger than the padded input");
  expect_invalid(big_kernel.run({random_tensor({1, 2, 4, 4}, 1), random_tensor({1, 2, 3, 3}, 2),
                                 random_tensor({2}, 3)}),
                 "bias has shape");
  NodeRunner rank2("Conv", "", 11, {}, Device::cpu);
  expect_invalid(rank2.run({random_tensor({2, 3}, 1), random_tensor({2, 3}, 2)}), "rank 3 to 5");
}

// ---- FusedConv: Y = act(Conv(X, W) + B + Z)

struct ActCase {
  const char* name;
  std::vector<float> params;
};

const std::vector<ActCase> kActivations = {
    {"", {}},
    {"Relu", {}},
    {"Clip", {-0.3f, 0.4f}},
    {"LeakyRelu", {0.1f}},
    {"Sigmoid", {}},
    {"HardSigmoid", {0.3f, 0.4f}},
    {"HardSwish", {}},
    {"Tanh", {}},
    {"Silu", {}},
    {"Gelu", {}},
    {"GeluTanh", {}},
};

TEST(CpuFusedConv, MatchesReferenceForEveryActivationWithBiasAndResidual) {
  ASSERT_NE(find_kernel("FusedConv", "com.osprey", 1, DType::kFloat32, true), nullptr);
  ThreadPool pool2(2);
  const Tensor x = random_tensor({2, 6, 9, 7}, 11), w = random_tensor({10, 6, 3, 3}, 12);
  const Tensor b = random_tensor({10}, 13), z = random_tensor({2, 10, 5, 3}, 14);
  for (const auto& a : kActivations) {
    for (bool with_z : {false, true}) {
      SCOPED_TRACE(std::string(a.name) + (with_z ? " +Z" : ""));
      Attrs attrs = {{"strides", ints_attr({2, 2})},
                     {"pads", ints_attr({1, 1, 1, 0})},
                     {"activation", string_attr(a.name)}};
      if (!a.params.empty()) attrs["activation_params"] = floats_attr(a.params);
      const std::vector<Tensor> in = {x, w, b, with_z ? z : Tensor()};
      NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
      auto want = ref.run(in);
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w, b});
      ASSERT_TRUE(fast.prepare_status().ok()) << fast.prepare_status().to_string();
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
        auto got = fast.run(in, pool);
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        expect_close(*got, *want);
      }
    }
  }
}

TEST(CpuFusedConv, DepthwiseWithResidualAndNoBias) {
  const Attrs attrs = {{"group", int_attr(12)},
                       {"pads", ints_attr({1, 1, 1, 1})},
                       {"activation", string_attr("Clip")},
                       {"activation_params", floats_attr({0.0f, 6.0f})}};
  const Tensor x = random_tensor({1, 12, 8, 8}, 1), w = random_tensor({12, 1, 3, 3}, 2);
  const Tensor z = random_tensor({1, 12, 8, 8}, 3);
  NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
  NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
  auto want = ref.run({x, w, Tensor(), z});
  auto got = fast.run({x, w, Tensor(), z});
  ASSERT_TRUE(want.ok() && got.ok());
  expect_close(*got, *want);
}

TEST(CpuFusedConv, BadActivationIsAClearError) {
  const Tensor w = random_tensor({2, 1, 1, 1}, 2);
  NodeRunner unknown("FusedConv", "com.osprey", 1, {{"activation", string_attr("Softplus")}},
                     Device::cpu, {Tensor(), w});
  EXPECT_EQ(unknown.prepare_status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.prepare_status().message().find("Softplus"), std::string::npos);
  NodeRunner params("FusedConv", "com.osprey", 1, {{"activation", string_attr("Clip")}},
                    Device::cpu);
  expect_invalid(params.run({random_tensor({1, 1, 2, 2}, 1), w}), "activation_params");
  NodeRunner z_shape("FusedConv", "com.osprey", 1, {}, Device::cpu);
  expect_invalid(
      z_shape.run({random_tensor({1, 1, 2, 2}, 1), w, Tensor(), random_tensor({1, 2, 2, 1}, 3)}),
      "residual Z");
}

TEST(CpuFusedConv, ActivationAffineMatchesReference) {
  // act(conv) * scale + shift: after HardSwish (PP-LCNetV3), after no activation, with a
  // residual, channels-last 3x3 (a form that would otherwise take the tile kernels) and 1x1.
  ThreadPool pool2(2);
  const Tensor w3 = random_tensor({8, 5, 3, 3}, 21), w1 = random_tensor({8, 5, 1, 1}, 22);
  const Tensor b = random_tensor({8}, 23);
  struct Case {
    const char* act;
    bool channels_last, residual, pointwise;
  };
  for (const Case& c : {Case{"HardSwish", false, false, false}, Case{"", false, true, false},
                        Case{"HardSwish", true, false, false}, Case{"Relu", true, true, true}}) {
    SCOPED_TRACE(std::string(c.act) + (c.channels_last ? " nhwc" : "") + (c.residual ? " +Z" : ""));
    Attrs attrs = {{"activation", string_attr(c.act)}, {"activation_affine", floats_attr({-1.75f, 0.3f})}};
    const Tensor& w = c.pointwise ? w1 : w3;
    if (!c.pointwise) attrs["pads"] = ints_attr({1, 1, 1, 1});
    if (c.channels_last) attrs["channels_last"] = int_attr(1);
    const Tensor x = c.channels_last ? random_tensor({1, 9, 10, 5}, 24) : random_tensor({1, 5, 9, 10}, 24);
    const Tensor z = c.channels_last ? random_tensor({1, 9, 10, 8}, 25) : random_tensor({1, 8, 9, 10}, 25);
    const std::vector<Tensor> in = {x, w, b, c.residual ? z : Tensor()};
    NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
    auto want = ref.run(in);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    // The affine changes the result (the test would not notice it missing otherwise).
    Attrs plain = attrs;
    plain.erase("activation_affine");
    auto without = NodeRunner("FusedConv", "com.osprey", 1, plain, Device::ref).run(in);
    ASSERT_TRUE(without.ok());
    EXPECT_FALSE(bit_equal(*without, *want));
    NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w, b});
    ASSERT_TRUE(fast.prepare_status().ok()) << fast.prepare_status().to_string();
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      auto got = fast.run(in, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      expect_close(*got, *want);
    }
  }
  // Not two values: both kernels name the attribute.
  const Attrs bad = {{"activation_affine", floats_attr({2.0f})}};
  for (Device d : {Device::cpu, Device::ref})
    expect_invalid(NodeRunner("FusedConv", "com.osprey", 1, bad, d).run({random_tensor({1, 5, 4, 4}, 1), w1}),
                   "activation_affine");
}

}  // namespace
}  // namespace osprey::testing
