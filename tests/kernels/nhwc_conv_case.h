// A channels-last FusedConv test case, shared by the tests of the tap, tile and product forms,
// and the checks those tests share.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cpu_test_harness.h"
#include "kernel_harness.h"
#include "kernels/cpu/dnnl_common.h"
#include "threading/thread_pool.h"

namespace osprey::testing {

struct NhwcConvCase {
  const char* name;
  Shape x_nhwc, w;  // X [N, H, W, C], W [M, C, KH, KW]
  Attrs attrs;
  bool bias, residual;
};

// The attributes with channels_last = 1.
inline Attrs channels_last(Attrs a) {
  a["channels_last"] = int_attr(1);
  return a;
}

// Cases both forms must get right: several output rows and channel blocks with padding on
// every side, a stride with asymmetric pads, a residual and Clip, SAME_UPPER with unequal
// strides, and a dilated 5x3 kernel with fewer than 16 output channels.
inline std::vector<NhwcConvCase> shared_nhwc_conv_cases() {
  return {
      {"3x3_pad1_relu_batch2",
       {2, 9, 9, 16},
       {24, 16, 3, 3},
       {{"pads", ints_attr({1, 1, 1, 1})}, {"activation", string_attr("Relu")}},
       true,
       false},
      {"3x3_stride2_asymmetric_pads_residual_clip",
       {1, 11, 10, 12},
       {20, 12, 3, 3},
       {{"strides", ints_attr({2, 2})},
        {"pads", ints_attr({1, 0, 0, 1})},
        {"activation", string_attr("Clip")},
        {"activation_params", floats_attr({-0.5f, 0.5f})}},
       true,
       true},
      {"same_upper_stride3_residual",
       {1, 10, 14, 7},
       {6, 7, 3, 3},
       {{"auto_pad", string_attr("SAME_UPPER")}, {"strides", ints_attr({3, 2})}},
       false,
       true},
      {"5x3_dilated_no_bias_7_channels_out",
       {1, 13, 12, 8},
       {7, 8, 5, 3},
       {{"dilations", ints_attr({2, 3})}, {"pads", ints_attr({2, 3, 4, 1})}},
       false,
       false},
  };
}

// The implementation oneDNN picks for the direct nhwc 3x3 convolution (pads 1) of
// x [1, C, H, H] by M filters: what the forms' auto policies decide on.
inline std::string direct_impl(int64_t C, int64_t H, int64_t M) {
  using dnnl::memory;
  const auto nhwc = memory::format_tag::nhwc;
  const memory::desc src({1, C, H, H}, memory::data_type::f32, nhwc),
      dst({1, M, H, H}, memory::data_type::f32, nhwc),
      w({M, C, 3, 3}, memory::data_type::f32, memory::format_tag::any);
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                    dnnl::algorithm::convolution_direct, src, w, dst, {1, 1},
                                    {1, 1}, {1, 1});
  return dnnl::convolution_forward::primitive_desc(d, cpu::dnnl_engine()).impl_info_str();
}

// Runs case c (channels-last, constant weights, random X / bias / Z) on the CPU kernel, on no
// pool and on a pool of 2, and checks that each run took the form (runs() counts its runs)
// and agrees with the reference FusedConv.
inline void expect_form_matches_reference(const NhwcConvCase& c, int64_t (*runs)()) {
  SCOPED_TRACE(c.name);
  ThreadPool pool2(2);
  const Attrs attrs = channels_last(c.attrs);
  const Tensor x = random_tensor(c.x_nhwc, 1), w = random_tensor(c.w, 2), b = random_tensor({c.w[0]}, 3);
  NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
  auto shape_run = ref.run({x, w, c.bias ? b : Tensor()});
  ASSERT_TRUE(shape_run.ok()) << shape_run.status().to_string();
  const Tensor z = c.residual ? random_tensor(shape_run->shape(), 4) : Tensor();
  const std::vector<Tensor> in = {x, w, c.bias ? b : Tensor(), z};
  auto want = ref.run(in);
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
  ASSERT_TRUE(fast.prepare_status().ok()) << fast.prepare_status().to_string();
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
    const int64_t before = runs();
    auto got = fast.run(in, pool);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(runs(), before + 1) << "the form did not run";
    expect_close(*got, *want);
  }
}

// Runs `first` on a FusedConv node with constant weights w (and bias b), has the session release
// w, then runs `second` with w released: both must agree with the reference FusedConv. Returns
// how far `counter` moved during each of the two runs ({-1, -1} when a run failed).
inline std::pair<int64_t, int64_t> runs_around_a_release(const Attrs& attrs, const Tensor& w,
                                                         const Tensor& b, const Tensor& first,
                                                         const Tensor& second, int64_t (*counter)()) {
  NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
  auto want_first = ref.run({first, w, b});
  auto want_second = ref.run({second, w, b});
  EXPECT_TRUE(want_first.ok() && want_second.ok());
  if (!want_first.ok() || !want_second.ok()) return {-1, -1};
  NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
  int64_t before = counter();
  auto got_first = fast.run({first, w, b});
  const int64_t moved_first = counter() - before;
  EXPECT_TRUE(got_first.ok()) << got_first.status().to_string();
  if (!got_first.ok() || !fast.state()) return {-1, -1};
  expect_close(*got_first, *want_first);
  EXPECT_TRUE(fast.state()->holds_constant(1));
  fast.state()->constant_released(1);
  const Tensor released = Tensor::wrap(DType::kFloat32, w.shape(), nullptr, nullptr);
  before = counter();
  auto got_second = fast.run({second, released, b});
  const int64_t moved_second = counter() - before;
  EXPECT_TRUE(got_second.ok()) << got_second.status().to_string();
  if (!got_second.ok()) return {-1, -1};
  expect_close(*got_second, *want_second);
  return {moved_first, moved_second};
}

// A convolution some form must not take.
struct OtherConv {
  const char* name;
  Shape x, w;
  Attrs attrs;
  bool constant_w;
};

// Runs each on the CPU kernel and the reference: they agree, and runs() did not move.
inline void expect_form_not_taken(const std::vector<OtherConv>& others, int64_t (*runs)()) {
  for (const auto& o : others) {
    SCOPED_TRACE(o.name);
    const Tensor x = random_tensor(o.x, 10), w = random_tensor(o.w, 11);
    NodeRunner fast("FusedConv", "com.osprey", 1, o.attrs, Device::cpu,
                    {Tensor(), o.constant_w ? w : Tensor()});
    NodeRunner ref("FusedConv", "com.osprey", 1, o.attrs, Device::ref);
    const int64_t before = runs();
    auto got = fast.run({x, w});
    auto want = ref.run({x, w});
    ASSERT_TRUE(got.ok() && want.ok()) << got.status().to_string();
    EXPECT_EQ(runs(), before);
    expect_close(*got, *want);
  }
}

}  // namespace osprey::testing
