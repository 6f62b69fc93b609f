// A channels-last 2-D convolution (group 1) run one kernel row at a time: for kernel row r, the
// input pixels under that row's taps are copied side by side ([pixels, KW * C], "im2row"), and a
// 1x1 convolution with the row's weights ([M, KW * C], packed once) adds them into Y. Bias and a
// residual Z go with the first row, the activation with the last (oneDNN post-ops), so Y is
// written once per row and the result is that of the direct convolution.
//
// Why: without AVX-512, oneDNN 2.6's direct convolution (jit:avx2) runs 3x3 layers with many
// channels on small images (ResNet's 14x14 and 7x7 stages, the stride-2 ones) at 45-70 GFLOP/s
// on one core, while its 1x1 kernel (jit_1x1:avx2) runs at the FMA peak. Copying the rows costs
// a few percent of the product. Pixels are taken in blocks so that a row's copy stays within
// kTapBlockBytes whatever the image size.
//
// The same form runs a convolution in the channels_blocked layout ([N, C/b, H, W, b]): a row's
// copy is then [KW * C / b, pixels, b] and the 1x1 primitive reads and writes nChw8c (nChw16c),
// one whole image per block, so that Y's block is that image's part of the tensor.
#pragma once

#include <memory>
#include <vector>

#include "kernels/cpu/dnnl_common.h"
#include "threading/thread_pool.h"

namespace osprey::cpu {

// kAuto: the tap form where it pays (taps_pay); kAlways: wherever it applies (tests check the
// form on any machine); kNever: direct convolutions only. Process-wide.
enum class TapPolicy { kAuto, kAlways, kNever };
void set_conv_tap_policy(TapPolicy policy);
TapPolicy conv_tap_policy();
// How many times run_taps has run in this process (tests check that the form was taken).
int64_t tap_convolutions_run();

// Sets a form's policy for one scope and restores the previous one (tests).
template <void (*Set)(TapPolicy), TapPolicy (*Get)()>
class FormPolicyScope {
 public:
  explicit FormPolicyScope(TapPolicy p) : old_(Get()) { Set(p); }
  ~FormPolicyScope() { Set(old_); }
  FormPolicyScope(const FormPolicyScope&) = delete;
  FormPolicyScope& operator=(const FormPolicyScope&) = delete;

 private:
  TapPolicy old_;
};
using TapPolicyScope = FormPolicyScope<set_conv_tap_policy, conv_tap_policy>;

// The most bytes one row's copied pixels take (the pixel block is sized to fit; in the blocked
// layout a block is one whole image).
constexpr size_t kTapBlockBytes = size_t{4} << 20;
// Blocked problems with fewer input channels run on oneDNN's direct nChw8c kernel.
constexpr int64_t kBlockedTapMinChannels = 128;

// A 2-D channels-last convolution with one group, as the tap form (and the tile form,
// conv_tiles.h) sees it.
struct NhwcConv {
  int64_t N = 0, C = 0, H = 0, W = 0;  // input [N, H, W, C]
  int64_t M = 0, KH = 0, KW = 0;       // weights [M, C, KH, KW]
  int64_t OH = 0, OW = 0;
  int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_top = 0, pad_left = 0;
  bool has_bias = false, has_z = false;
  // 0: X and Y are channels-last as above. b (8 or 16, the channels_blocked layout): X is
  // [N, C/b, H, W, b] and Y [N, M/b, OH, OW, b] (C and M multiples of b). Only the tap form
  // takes blocked problems.
  int64_t block = 0;
};

// Whether the tap form should run `p` under the tap policy, given the direct primitive
// oneDNN would use: with kAuto, when that primitive is the AVX2 direct kernel and C >= 64
// (channels-last) or C >= kBlockedTapMinChannels (blocked). A blocked problem also needs each
// image's copied rows to fit in kTapBlockBytes (taps_fit), whatever the policy.
bool taps_pay(const NhwcConv& p, const char* direct_impl);
bool taps_fit(const NhwcConv& p);

// The row weights packed for one 1x1 primitive's layout: rows[r] holds kernel row r.
struct TapRows {
  dnnl::memory::desc md;
  std::vector<dnnl::memory> rows;
};

// The primitives of one problem (immutable once built; shared by concurrent runs).
struct TapConv {
  NhwcConv p;
  int64_t block = 0;  // pixels per block; the last block may be shorter
  struct Step {       // one 1x1 primitive over `pixels` pixels
    dnnl::convolution_forward prim;
    dnnl::memory::desc src_md, dst_md, w_md, scratch_md;
  };
  // steps[size][role]: size 0 = full blocks, 1 = the tail block (when it is shorter);
  // role 0 = the first row, 1 = a middle row, 2 = the last row (roles a kernel does not have
  // stay empty). All share one weights layout, rows->md.
  Step steps[2][3];
  int64_t tail = 0;
  dnnl::memory::desc bias_md;
  std::shared_ptr<const TapRows> rows;
};

// Builds the primitives for `p` (with the activation's post-ops). `packed` holds the row weights
// already packed for this node (empty at first): the new primitives reuse a form in their layout,
// or one is added, reordered from the plain weights `w` (when given) or from packed.front().
Result<std::shared_ptr<const TapConv>> build_taps(
    const NhwcConv& p, const Activation& act, const float* w,
    std::vector<std::shared_ptr<const TapRows>>* packed);

// The plain weights [M, C, KH, KW] back from their packed rows (a blocked node whose tap form
// does not fit a later image size runs that size directly, from these).
std::vector<float> unpack_tap_rows(const TapRows& rows, int64_t M, int64_t C, int64_t KH,
                                   int64_t KW);

// The calling thread's scratch floats for copied pixels (grown to the largest asked for and
// kept; shared by the tap and product forms, whose runs never nest).
float* conv_thread_buffer(size_t floats);

// Runs it: x is [N, H, W, C], y is [N, OH, OW, M] (or both blocked, see NhwcConv::block),
// y holding Z already when p.has_z; bias is [M] or null.
void run_taps(const TapConv& t, const float* x, const float* bias, float* y, ThreadPool* pool);

}  // namespace osprey::cpu
