// A channels-last FusedConv test case, shared by the tests of the tap and tile forms.
#pragma once

#include <string>
#include <vector>

#include "kernel_harness.h"
#include "kernels/cpu/dnnl_common.h"

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

}  // namespace osprey::testing
