// The tile form of channels-last convolutions (kernels/cpu/conv_tiles.h): register tiles over
// every tap and input channel, checked against the reference FusedConv on shapes that reach
// every piece (tiles of 1 to 6 pixels across output rows, a channel block narrower than 16,
// padding on every side, strides, dilations, batches, bias, residual Z, Relu and Clip), on
// every ISA variant this CPU runs, and where the form must not be taken.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "cpu_test_harness.h"
#include "nhwc_conv_case.h"
#include "kernels/cpu/conv_tiles.h"

namespace osprey::testing {
namespace {

using cpu::TapPolicy;

using Case = NhwcConvCase;

// The shared cases, then a one-row kernel over 64 channels,
// a 7x7 image whose tiles span rows, and an input without padding.
std::vector<Case> cases() {
  std::vector<Case> c = shared_nhwc_conv_cases();
  const std::vector<Case> own = {
      {"1x3_residual_relu_64_channels",
       {2, 6, 7, 64},
       {48, 64, 1, 3},
       {{"pads", ints_attr({0, 1, 0, 1})}, {"activation", string_attr("Relu")}},
       true,
       true},
      {"3x3_7x7_image_tiles_across_rows",
       {1, 7, 7, 32},
       {32, 32, 3, 3},
       {{"pads", ints_attr({1, 1, 1, 1})}},
       true,
       false},
      {"3x3_no_pads_one_pixel_out", {3, 3, 3, 5}, {16, 5, 3, 3}, {}, true, true},
  };
  c.insert(c.end(), own.begin(), own.end());
  return c;
}

struct Prepared {
  std::vector<Tensor> in;
  Tensor want;
};

Prepared prepare(const Case& c, uint32_t seed) {
  const Attrs attrs = channels_last(c.attrs);
  const Tensor x = random_tensor(c.x_nhwc, seed), w = random_tensor(c.w, seed + 1),
               b = random_tensor({c.w[0]}, seed + 2);
  NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
  auto shape_run = ref.run({x, w, c.bias ? b : Tensor()});
  EXPECT_TRUE(shape_run.ok()) << shape_run.status().to_string();
  const Tensor z = c.residual ? random_tensor(shape_run->shape(), seed + 3) : Tensor();
  Prepared p{{x, w, c.bias ? b : Tensor(), z}, Tensor()};
  auto want = ref.run(p.in);
  EXPECT_TRUE(want.ok()) << want.status().to_string();
  if (want.ok()) p.want = *want;
  return p;
}

TEST(CpuConvTiles, MatchesReferenceOnEveryPiece) {
  cpu::TilePolicyScope always(TapPolicy::kAlways);
  ThreadPool pool2(2);
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    const Prepared p = prepare(c, 1);
    ASSERT_TRUE(p.want.defined());
    NodeRunner fast("FusedConv", "com.osprey", 1, channels_last(c.attrs), Device::cpu,
                    {Tensor(), p.in[1]});
    ASSERT_TRUE(fast.prepare_status().ok()) << fast.prepare_status().to_string();
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      const int64_t before = cpu::tile_convolutions_run();
      auto got = fast.run(p.in, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_EQ(cpu::tile_convolutions_run(), before + 1) << "the tile form did not run";
      expect_close(*got, p.want);
    }
  }
}

// The tiles of each ISA variant, run directly on the weights packed as the kernel packs them.
TEST(CpuConvTiles, EveryIsaMatchesReference) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    const Prepared p = prepare(c, 11);
    ASSERT_TRUE(p.want.defined());
    // The problem as conv_dnnl.cc describes it, from the reference's output shape.
    const auto& xs = c.x_nhwc;
    const Shape& ys = p.want.shape();
    const int64_t KH = c.w[2], KW = c.w[3];
    cpu::NhwcConv prob{xs[0], xs[3], xs[1], xs[2], c.w[0], KH, KW, ys[1], ys[2]};
    const auto ints = [&](const char* n, int64_t d0, int64_t d1) {
      auto it = c.attrs.find(n);
      return it == c.attrs.end() ? std::vector<int64_t>{d0, d1} : it->second.ints;
    };
    const auto strides = ints("strides", 1, 1), dil = ints("dilations", 1, 1);
    prob.stride_h = strides[0];
    prob.stride_w = strides[1];
    prob.dil_h = dil[0];
    prob.dil_w = dil[1];
    if (c.attrs.count("auto_pad")) {  // SAME_UPPER: the extra pad goes at the end
      const int64_t th = std::max<int64_t>(0, (ys[1] - 1) * strides[0] + (KH - 1) * dil[0] + 1 - xs[1]);
      const int64_t tw = std::max<int64_t>(0, (ys[2] - 1) * strides[1] + (KW - 1) * dil[1] + 1 - xs[2]);
      prob.pad_top = th / 2;
      prob.pad_left = tw / 2;
    } else {
      const auto pads = ints("pads", 0, 0);
      prob.pad_top = pads[0];
      prob.pad_left = pads[1];
    }
    prob.has_bias = c.bias;
    prob.has_z = c.residual;
    cpu::TileAct act = cpu::TileAct::kNone;
    float lo = 0, hi = 0;
    if (c.attrs.count("activation")) {
      const std::string name = c.attrs.at("activation").s;
      std::vector<float> params;
      if (c.attrs.count("activation_params")) params = c.attrs.at("activation_params").floats;
      ASSERT_TRUE(cpu::tile_activation(name, params, &act, &lo, &hi)) << name;
    }
    auto panels = std::make_shared<std::vector<float>>(
        static_cast<size_t>(cpu::conv_panel_floats(c.w[0], xs[3], KH, KW)));
    cpu::pack_conv_panels(p.in[1].data<float>(), c.w[0], xs[3], KH, KW, panels->data());
    const cpu::TileConv t = cpu::make_tile_conv(prob, act, lo, hi, panels);
    for (cpu::VectorIsa isa :
         {cpu::VectorIsa::generic, cpu::VectorIsa::avx2, cpu::VectorIsa::avx512}) {
      if (!cpu::vector_isa_supported(isa)) continue;
      SCOPED_TRACE(cpu::vector_isa_name(isa));
      Tensor y = c.residual ? p.in[3].clone() : Tensor(DType::kFloat32, ys);
      ASSERT_TRUE(cpu::run_tile_conv(isa, t, p.in[0].data<float>(),
                                     c.bias ? p.in[2].data<float>() : nullptr, y.data<float>(),
                                     nullptr, int64_t{1} << 24)
                      .ok());
      expect_close(y, p.want);
    }
  }
}

TEST(CpuConvTiles, AutoTakesTheTileFormForTwoDigitChannelCounts) {
  cpu::TilePolicyScope automatic(TapPolicy::kAuto);
  const Attrs attrs = channels_last({{"pads", ints_attr({1, 1, 1, 1})}});
  for (const int64_t C : {8, 64, 128}) {
    SCOPED_TRACE(C);
    const Tensor x = random_tensor({1, 7, 7, C}, 16), w = random_tensor({16, C, 3, 3}, 17);
    NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
    NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
    const int64_t before = cpu::tile_convolutions_run();
    auto got = fast.run({x, w});
    auto want = ref.run({x, w});
    ASSERT_TRUE(got.ok() && want.ok());
    // Only where oneDNN's direct kernel is the AVX2 one (no AVX-512, or oneDNN held to AVX2).
    const bool expected = C >= 16 && C < 128 && direct_impl(C, 7, 16) == "jit:avx2";
    EXPECT_EQ(cpu::tile_convolutions_run(), before + (expected ? 1 : 0)) << direct_impl(C, 7, 16);
    expect_close(*got, *want);
  }
}

TEST(CpuConvTiles, NotUsedWhereItDoesNotApply) {
  // Grouped, 1x1, NCHW, computed weights and activations it does not apply (Sigmoid) take the
  // other forms even with kAlways; so does everything while the tap form is forced.
  cpu::TilePolicyScope always(TapPolicy::kAlways);
  expect_form_not_taken(
      {
          {"grouped", {1, 6, 6, 32}, {32, 8, 3, 3}, channels_last({{"group", int_attr(4)}}), true},
          {"pointwise", {1, 6, 6, 32}, {4, 32, 1, 1}, channels_last({}), true},
          {"nchw", {1, 32, 6, 6}, {4, 32, 3, 3}, {}, true},
          {"computed_weights", {1, 6, 6, 32}, {4, 32, 3, 3}, channels_last({}), false},
          {"sigmoid", {1, 6, 6, 32}, {4, 32, 3, 3},
           channels_last({{"activation", string_attr("Sigmoid")}}), true},
      },
      cpu::tile_convolutions_run);
  cpu::TapPolicyScope taps(TapPolicy::kAlways);
  const Tensor x = random_tensor({1, 6, 6, 32}, 12), w = random_tensor({4, 32, 3, 3}, 13);
  NodeRunner fast("FusedConv", "com.osprey", 1, channels_last({}), Device::cpu, {Tensor(), w});
  const int64_t before = cpu::tile_convolutions_run();
  ASSERT_TRUE(fast.run({x, w}).ok());
  EXPECT_EQ(cpu::tile_convolutions_run(), before);
}

TEST(CpuConvTiles, PaddedInputOverTheElementLimitIsAClearError) {
  cpu::NhwcConv prob{1, 16, 100, 100, 16, 3, 3, 100, 100};
  prob.pad_top = prob.pad_left = 1;
  auto panels = std::make_shared<std::vector<float>>(
      static_cast<size_t>(cpu::conv_panel_floats(16, 16, 3, 3)), 0.0f);
  const cpu::TileConv t = cpu::make_tile_conv(prob, cpu::TileAct::kNone, 0, 0, panels);
  std::vector<float> x(100 * 100 * 16, 1.0f), y(100 * 100 * 16);
  // 102 x 102 x 16 padded floats against a limit of 100 x 100 x 16.
  Status s = cpu::run_tile_conv(cpu::best_vector_isa(), t, x.data(), nullptr, y.data(), nullptr,
                                100 * 100 * 16);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.to_string();
  EXPECT_NE(s.message().find("padded input"), std::string::npos) << s.to_string();
}

}  // namespace
}  // namespace osprey::testing
