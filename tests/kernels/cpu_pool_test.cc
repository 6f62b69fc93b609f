// com.osprey MaxPool on oneDNN against its reference (transposes around the reference
// MaxPool): channels-last and channels-first, 1-D to 3-D, strides, explicit and SAME pads,
// ceil_mode and dilations, 1 and 2 threads, prepared and unprepared; and its errors.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

void check(const Attrs& attrs, const Tensor& x) {
  static ThreadPool pool2(2);
  NodeRunner ref("MaxPool", "com.osprey", 1, attrs, Device::ref);
  auto want = ref.run({x});
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  NodeRunner prepared("MaxPool", "com.osprey", 1, attrs, Device::cpu, {Tensor()});
  NodeRunner unprepared("MaxPool", "com.osprey", 1, attrs, Device::cpu);
  ASSERT_TRUE(prepared.found());
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2})
    for (const NodeRunner* r : {&prepared, &unprepared}) {
      auto got = r->run({x}, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_TRUE(bit_equal(*got, *want)) << shape_to_string(x.shape());  // a max is exact
    }
}

TEST(CpuMaxPool, ChannelsLastMatchesReference) {
  const Attrs resnet_stem = {{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({3, 3})},
                             {"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}};
  check(resnet_stem, random_tensor({1, 16, 16, 8}, 1));
  check(resnet_stem, random_tensor({2, 15, 9, 3}, 2));  // odd sizes, few channels
  check({{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({2, 2})}},
        random_tensor({1, 8, 8, 17}, 3));
  check({{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({3, 2})}, {"auto_pad", string_attr("SAME_UPPER")},
         {"strides", ints_attr({2, 1})}},
        random_tensor({1, 7, 6, 5}, 4));
  check({{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({3, 3})}, {"ceil_mode", int_attr(1)},
         {"strides", ints_attr({2, 2})}},
        random_tensor({1, 10, 10, 4}, 5));
  check({{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({2, 2})}, {"dilations", ints_attr({2, 2})}},
        random_tensor({1, 9, 9, 4}, 6));
  check({{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({3})}, {"strides", ints_attr({2})}},
        random_tensor({2, 11, 6}, 7));  // 1-D, nwc
  check({{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({2, 2, 2})}},
        random_tensor({1, 4, 5, 6, 3}, 8));  // 3-D, ndhwc
}

TEST(CpuMaxPool, ChannelsFirstMatchesReference) {
  check({{"kernel_shape", ints_attr({3, 3})}, {"pads", ints_attr({1, 0, 1, 2})}}, random_tensor({1, 3, 8, 7}, 9));
}

TEST(CpuMaxPool, ErrorsNameTheProblem) {
  NodeRunner r("MaxPool", "com.osprey", 1, {{"channels_last", int_attr(1)}}, Device::cpu);
  auto no_kernel = r.run({random_tensor({1, 4, 4, 2}, 1)});
  ASSERT_FALSE(no_kernel.ok());
  EXPECT_NE(no_kernel.status().message().find("kernel_shape is required"), std::string::npos);
  NodeRunner big("MaxPool", "com.osprey", 1,
                 {{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({5, 5})}}, Device::cpu);
  auto too_big = big.run({random_tensor({1, 3, 3, 2}, 1)});
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.status().message().find("larger than the padded input"), std::string::npos)
      << too_big.status().to_string();
  NodeRunner flat("MaxPool", "com.osprey", 1, {{"kernel_shape", ints_attr({1})}}, Device::cpu);
  auto rank2 = flat.run({random_tensor({4, 4}, 1)});
  ASSERT_FALSE(rank2.ok());
  EXPECT_NE(rank2.status().message().find("rank 3 to 5"), std::string::npos);
}

}  // namespace
}  // namespace osprey::testing
