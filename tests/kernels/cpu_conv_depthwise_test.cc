// Channels-last depthwise convolutions (kernels/cpu/conv_dnnl.cc): where oneDNN offers its
// jit_dw kernel after brdgmm_dw, the node takes jit_dw (the counter of such primitives moves) and
// agrees with the reference FusedConv (3x3 and 5x5, strides, asymmetric pads, bias, residual,
// activations, batches, odd channel counts, 1 and 2 threads). Grouped convolutions that are not
// depthwise, depthwise ones with a channel multiplier, NCHW ones and bf16 compute keep oneDNN's
// first choice.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cpu_test_harness.h"
#include "kernels/cpu/conv_dnnl.h"
#include "kernels/cpu/cpu_capabilities.h"
#include "kernels/cpu/dnnl_common.h"

namespace osprey::testing {
namespace {

bool starts_with(const std::string& s, const char* prefix) {
  return s.compare(0, std::strlen(prefix), prefix) == 0;
}

// Whether oneDNN offers kDepthwiseAvoided first and kDepthwisePreferred after it for an nhwc
// 3x3 depthwise convolution of 32 channels (AVX-512: brdgmm_dw, then jit_dw).
bool preference_applies() {
  using dnnl::memory;
  const auto nhwc = memory::format_tag::nhwc;
  const memory::desc src({1, 32, 12, 12}, memory::data_type::f32, nhwc),
      dst({1, 32, 12, 12}, memory::data_type::f32, nhwc),
      w({32, 1, 1, 3, 3}, memory::data_type::f32, memory::format_tag::any);
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                    dnnl::algorithm::convolution_direct, src, w, dst, {1, 1},
                                    {1, 1}, {1, 1});
  dnnl::convolution_forward::primitive_desc pd(d, cpu::dnnl_engine());
  if (!starts_with(pd.impl_info_str(), cpu::kDepthwiseAvoided)) return false;
  while (pd.next_impl())
    if (starts_with(pd.impl_info_str(), cpu::kDepthwisePreferred)) return true;
  return false;
}

struct Case {
  const char* name;
  Shape x_nhwc, w;  // X [N, H, W, C], W [M, C/group, KH, KW]
  Attrs attrs;      // without channels_last
  bool bias, residual;
  bool preferred;  // whether the node should take kDepthwisePreferred where it applies
};

Attrs dw(int64_t group, Attrs a) {
  a["group"] = int_attr(group);
  return a;
}

std::vector<Case> cases() {
  const Attrs clip6 = {{"activation", string_attr("Clip")}, {"activation_params", floats_attr({0.0f, 6.0f})}};
  Attrs pad1_clip = clip6;
  pad1_clip["pads"] = ints_attr({1, 1, 1, 1});
  return {
      {"3x3_pad1_clip_32ch", {1, 14, 14, 32}, {32, 1, 3, 3}, dw(32, pad1_clip), true, false, true},
      {"5x5_stride2_pad2_relu_odd_21ch_batch2",
       {2, 15, 13, 21},
       {21, 1, 5, 5},
       dw(21, {{"strides", ints_attr({2, 2})}, {"pads", ints_attr({2, 2, 2, 2})}, {"activation", string_attr("Relu")}}),
       true,
       false,
       true},
      {"3x3_asymmetric_pads_residual_no_bias",
       {1, 11, 10, 48},
       {48, 1, 3, 3},
       dw(48, {{"pads", ints_attr({1, 0, 0, 1})}}),
       false,
       true,
       true},
      {"3x3_hardswish_144ch", {1, 9, 9, 144}, {144, 1, 3, 3},
       dw(144, {{"pads", ints_attr({1, 1, 1, 1})}, {"activation", string_attr("HardSwish")}}), true, false, true},
      {"multiplier_2_stays", {1, 10, 10, 16}, {32, 1, 3, 3}, dw(16, {{"pads", ints_attr({1, 1, 1, 1})}}), true, false, false},
      {"grouped_not_depthwise_stays", {1, 10, 10, 16}, {16, 4, 3, 3}, dw(4, {{"pads", ints_attr({1, 1, 1, 1})}}), true, false, false},
  };
}

// Runs each case on the oneDNN kernel against the reference, and checks which nodes took the
// preferred kernel (none when `preferable` is false).
void check(const Attrs& extra, double tol, bool preferable) {
  const bool applies = preference_applies();
  ThreadPool pool2(2);
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    Attrs attrs = c.attrs;
    attrs["channels_last"] = int_attr(1);
    for (const auto& [k, v] : extra) attrs[k] = v;
    Attrs ref_attrs = c.attrs;
    ref_attrs["channels_last"] = int_attr(1);
    const Tensor x = random_tensor(c.x_nhwc, 1), w = random_tensor(c.w, 2), b = random_tensor({c.w[0]}, 3);
    NodeRunner ref("FusedConv", "com.osprey", 1, ref_attrs, Device::ref);
    auto shape_run = ref.run({x, w, c.bias ? b : Tensor()});
    ASSERT_TRUE(shape_run.ok()) << shape_run.status().to_string();
    std::vector<Tensor> in = {x, w, c.bias ? b : Tensor()};
    if (c.residual) in.push_back(random_tensor(shape_run->shape(), 4));
    auto want = ref.run(in);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
    ASSERT_TRUE(fast.prepare_status().ok()) << fast.prepare_status().to_string();
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      const int64_t before = cpu::depthwise_preferred_built();
      auto got = fast.run(in, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_EQ(cpu::depthwise_preferred_built() - before, preferable && c.preferred && applies ? 1 : 0);
      expect_close(*got, *want, tol);
    }
  }
}

TEST(CpuConvDepthwise, TakesThePreferredKernelWhereOfferedAndMatchesReference) {
  // On an AVX-512 CPU oneDNN 2.6 offers both: the preference is exercised, not skipped.
  if (cpu::avx512_kernels_available()) EXPECT_TRUE(preference_applies());
  check({}, 1e-4, true);
}

// bf16 compute keeps oneDNN's first choice (conv_dnnl.cc says why) and still agrees.
TEST(CpuConvDepthwise, Bf16ComputeKeepsTheFirstChoice) {
  if (!cpu::bf16_compute_available()) GTEST_SKIP() << "no native bf16 compute on this CPU";
  check({{"compute_precision", string_attr("bf16")}}, 5e-2, false);
}

// An NCHW depthwise convolution runs in the layout oneDNN chooses, with its first kernel.
TEST(CpuConvDepthwise, NchwKeepsTheFirstChoice) {
  const Attrs attrs = dw(32, {{"pads", ints_attr({1, 1, 1, 1})}});
  const Tensor x = random_tensor({1, 32, 12, 12}, 1), w = random_tensor({32, 1, 3, 3}, 2);
  NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
  NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
  auto want = ref.run({x, w});
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  const int64_t before = cpu::depthwise_preferred_built();
  auto got = fast.run({x, w});
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(cpu::depthwise_preferred_built() - before, 0);
  expect_close(*got, *want);
}

}  // namespace
}  // namespace osprey::testing
