// ConvTranspose on the CPU: the upsampling form (kernel = stride, its own kernel) against the
// reference (GEMM + col2im) on tails of the 32-column blocks, partial channel blocks, t = 1
// and 2, bias or none, batches, 1 and 2 threads, prepared (constant W packed at load) and not,
// a computed W; other forms give exactly the reference's results and errors.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

Attrs upsampling(int64_t s, int64_t t) {
  return {{"kernel_shape", ints_attr({s, t})}, {"strides", ints_attr({s, t})}};
}

// Runs the CPU kernel prepared (W and B constant), unprepared, and with 2 threads, against the
// reference; `exact` asks for the same bits.
void check(const Attrs& attrs, const Tensor& x, const Tensor& w, const Tensor& b, bool exact = false) {
  static ThreadPool pool2(2);
  NodeRunner ref("ConvTranspose", "", 11, attrs, Device::ref);
  std::vector<Tensor> in = {x, w};
  if (b.defined()) in.push_back(b);
  auto want = ref.run(in);
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  std::vector<Tensor> constants = {Tensor(), w};
  if (b.defined()) constants.push_back(b);
  NodeRunner prepared("ConvTranspose", "", 11, attrs, Device::cpu, constants);
  NodeRunner unprepared("ConvTranspose", "", 11, attrs, Device::cpu);
  ASSERT_TRUE(prepared.found());
  ASSERT_TRUE(prepared.prepare_status().ok()) << prepared.prepare_status().to_string();
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2})
    for (const NodeRunner* r : {&prepared, &unprepared}) {
      auto got = r->run(in, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      if (exact) EXPECT_TRUE(bit_equal(*got, *want)) << shape_to_string(x.shape());
      else expect_close(*got, *want, 1e-5);
    }
}

TEST(CpuConvTranspose, UpsamplingMatchesReference) {
  // PP-OCR's detector head shape (24 -> 24, 2x2 stride 2), smaller.
  check(upsampling(2, 2), random_tensor({1, 24, 6, 40}, 1), random_tensor({24, 24, 2, 2}, 2),
        random_tensor({24}, 3));
  // 24 -> 1 (the last head layer), one output channel: a partial block only.
  check(upsampling(2, 2), random_tensor({1, 24, 5, 33}, 4), random_tensor({24, 1, 2, 2}, 5),
        random_tensor({1}, 6));
  // Columns: a single one, under 16, exactly 16, 17, exactly 32, 64 + 5.
  for (int64_t w : {1, 7, 16, 17, 32, 69})
    check(upsampling(2, 2), random_tensor({1, 3, 2, w}, 10 + w), random_tensor({3, 5, 2, 2}, 11),
          random_tensor({5}, 12));
  // Batch 2, no bias, channels not a multiple of the block.
  check(upsampling(2, 2), random_tensor({2, 7, 3, 9}, 20), random_tensor({7, 3, 2, 2}, 21), Tensor());
}

TEST(CpuConvTranspose, UpsamplingOtherKernelsMatchReference) {
  // t = 1: 3x1 stride 3x1 (blocks of 2 channels x 3 rows), 4x1, 8x1, 1x1 (a plain product).
  check(upsampling(3, 1), random_tensor({1, 5, 4, 21}, 30), random_tensor({5, 5, 3, 1}, 31),
        random_tensor({5}, 32));
  check(upsampling(4, 1), random_tensor({1, 4, 3, 18}, 33), random_tensor({4, 3, 4, 1}, 34),
        random_tensor({3}, 35));
  check(upsampling(8, 1), random_tensor({1, 2, 2, 5}, 36), random_tensor({2, 2, 8, 1}, 37), Tensor());
  check(upsampling(1, 1), random_tensor({1, 6, 3, 35}, 38), random_tensor({6, 9, 1, 1}, 39),
        random_tensor({9}, 40));
  // t = 2 with s = 1, 3 and 4 (s * t up to 8).
  check(upsampling(1, 2), random_tensor({1, 3, 3, 20}, 41), random_tensor({3, 7, 1, 2}, 42),
        random_tensor({7}, 43));
  check(upsampling(3, 2), random_tensor({1, 3, 2, 19}, 44), random_tensor({3, 4, 3, 2}, 45),
        random_tensor({4}, 46));
  check(upsampling(4, 2), random_tensor({1, 2, 2, 33}, 47), random_tensor({2, 3, 4, 2}, 48),
        random_tensor({3}, 49));
  // Explicit zero pads, output_padding and output_shape that agree with the form.
  Attrs a = upsampling(2, 2);
  a["pads"] = ints_attr({0, 0, 0, 0});
  a["output_padding"] = ints_attr({0, 0});
  a["output_shape"] = ints_attr({6, 10});
  check(a, random_tensor({1, 4, 3, 5}, 50), random_tensor({4, 2, 2, 2}, 51), random_tensor({2}, 52));
}

TEST(CpuConvTranspose, ComputedWeightsMatchReference) {
  // W is not a constant: packed on every run.
  NodeRunner ref("ConvTranspose", "", 11, upsampling(2, 2), Device::ref);
  NodeRunner cpu("ConvTranspose", "", 11, upsampling(2, 2), Device::cpu);
  const Tensor x = random_tensor({1, 5, 4, 23}, 60), b = random_tensor({6}, 62);
  for (int seed : {61, 63}) {
    const Tensor w = random_tensor({5, 6, 2, 2}, seed);
    auto want = ref.run({x, w, b});
    auto got = cpu.run({x, w, b});
    ASSERT_TRUE(want.ok() && got.ok());
    expect_close(*got, *want, 1e-5);
  }
}

TEST(CpuConvTranspose, OtherFormsAreTheReferences) {
  // Overlapping windows, pads, dilations, groups, output padding, 1-D: the reference's bits.
  check({{"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}}, random_tensor({1, 3, 5, 5}, 70),
        random_tensor({3, 4, 3, 3}, 71), random_tensor({4}, 72), /*exact=*/true);
  check({{"strides", ints_attr({2, 2})}, {"dilations", ints_attr({2, 2})}}, random_tensor({1, 2, 4, 4}, 73),
        random_tensor({2, 2, 2, 2}, 74), Tensor(), true);
  check({{"strides", ints_attr({2, 2})}, {"group", int_attr(2)}}, random_tensor({1, 4, 3, 3}, 75),
        random_tensor({4, 3, 2, 2}, 76), random_tensor({6}, 77), true);
  check({{"strides", ints_attr({2, 2})}, {"output_padding", ints_attr({1, 1})}}, random_tensor({1, 2, 3, 3}, 78),
        random_tensor({2, 2, 2, 2}, 79), Tensor(), true);
  check({{"strides", ints_attr({2})}}, random_tensor({1, 3, 7}, 80), random_tensor({3, 2, 2}, 81),
        random_tensor({2}, 82), true);
  check({{"strides", ints_attr({4, 4})}}, random_tensor({1, 2, 2, 3}, 83), random_tensor({2, 2, 4, 4}, 84),
        Tensor(), true);  // s * t = 16: more outputs per channel than a block holds
}

TEST(CpuConvTranspose, BadInputsGetTheReferencesErrors) {
  NodeRunner cpu("ConvTranspose", "", 11, upsampling(2, 2), Device::cpu);
  // A bias of the wrong length, weights whose input channels do not match X.
  auto bad_bias = cpu.run({random_tensor({1, 3, 2, 2}, 90), random_tensor({3, 4, 2, 2}, 91), random_tensor({3}, 92)});
  ASSERT_FALSE(bad_bias.ok());
  EXPECT_NE(bad_bias.status().to_string().find("bias"), std::string::npos) << bad_bias.status().to_string();
  auto bad_w = cpu.run({random_tensor({1, 3, 2, 2}, 93), random_tensor({5, 4, 2, 2}, 94)});
  ASSERT_FALSE(bad_w.ok());
  EXPECT_NE(bad_w.status().to_string().find("weights"), std::string::npos) << bad_w.status().to_string();
}

}  // namespace
}  // namespace osprey::testing
