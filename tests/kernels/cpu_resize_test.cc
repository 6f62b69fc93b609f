// Resize and Upsample in linear and cubic modes on the CPU kernel against the reference, bit for
// bit: up and down scales, sizes, every coordinate transformation mode but the crop box, one
// axis or both of the last two changed, rank 3 to 5, opset 18's antialiasing and 19's
// half_pixel_symmetric, one and two threads; nearest mode, a resized batch or channel axis, the
// crop box and the reference's errors go through the reference.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

struct Case {
  Shape shape;
  std::vector<float> scales;    // empty: sizes
  std::vector<int64_t> sizes;
  std::string ctm;
};

TEST(CpuResize, LinearMatchesTheReferenceBitForBit) {
  const std::vector<Case> cases = {
      {{1, 64, 20, 20}, {1, 1, 2, 2}, {}, "half_pixel"},
      {{2, 3, 9, 7}, {1, 1, 0.5f, 0.75f}, {}, "half_pixel"},
      {{1, 2, 5, 6}, {}, {1, 2, 11, 3}, "align_corners"},
      {{1, 2, 5, 6}, {1, 1, 3, 1}, {}, "asymmetric"},
      {{1, 3, 6, 5}, {1, 1, 1, 2.5f}, {}, "pytorch_half_pixel"},
      {{1, 1, 1, 4}, {}, {1, 1, 1, 9}, "pytorch_half_pixel"},
      {{3, 8, 6}, {1, 1.5f, 2}, {}, "half_pixel"},
      {{1, 2, 2, 4, 4}, {1, 1, 1, 2, 2}, {}, "half_pixel"},
  };
  ThreadPool pool2(2);
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_to_string(c.shape) + " " + c.ctm);
    const Attrs attrs = {{"mode", string_attr("linear")}, {"coordinate_transformation_mode", string_attr(c.ctm)}};
    std::vector<Tensor> in = {awkward_tensor(c.shape, 3), Tensor()};
    if (c.sizes.empty()) {
      in.push_back(vec<float>(c.scales));
    } else {
      in.push_back(Tensor());
      in.push_back(vec<int64_t>(c.sizes));
    }
    NodeRunner ref("Resize", "", 13, attrs, Device::ref);
    NodeRunner fast("Resize", "", 13, attrs, Device::cpu);
    expect_same_as_reference(ref, fast, in, &pool2);
  }
  // Upsample (opset 9) in bilinear mode.
  const Attrs up = {{"mode", string_attr("linear")}};
  NodeRunner ref("Upsample", "", 9, up, Device::ref);
  NodeRunner fast("Upsample", "", 9, up, Device::cpu);
  expect_same_as_reference(ref, fast, {random_tensor({1, 4, 5, 5}, 2), vec<float>({1, 1, 2, 2})}, &pool2);
}

TEST(CpuResize, CubicAndAntialiasedTapsMatchTheReferenceBitForBit) {
  struct Form {
    int opset;
    Attrs attrs;
    std::vector<float> scales;
  };
  const std::vector<Form> forms = {
      {13, {{"mode", string_attr("cubic")}}, {1, 1, 2, 1.5f}},
      {13, {{"mode", string_attr("cubic")}, {"exclude_outside", int_attr(1)}, {"cubic_coeff_a", float_attr(-0.5f)}},
       {1, 1, 0.6f, 2}},
      {18, {{"mode", string_attr("linear")}, {"antialias", int_attr(1)}}, {1, 1, 0.5f, 0.5f}},
      {18, {{"mode", string_attr("linear")}, {"antialias", int_attr(1)}}, {1, 1, 0.3f, 1.7f}},
      {18, {{"mode", string_attr("cubic")}, {"antialias", int_attr(1)}}, {1, 1, 0.45f, 0.25f}},
      {19,
       {{"mode", string_attr("linear")}, {"coordinate_transformation_mode", string_attr("half_pixel_symmetric")}},
       {1, 1, 0.7f, 1.3f}},
  };
  ThreadPool pool2(2);
  for (const Form& f : forms) {
    for (const Shape& shape : std::vector<Shape>{{1, 3, 24, 20}, {2, 1, 7, 9}}) {
      SCOPED_TRACE("opset " + std::to_string(f.opset) + " " + shape_to_string(shape) + " " +
                   std::to_string(f.scales[2]) + " x " + std::to_string(f.scales[3]));
      NodeRunner ref("Resize", "", f.opset, f.attrs, Device::ref);
      NodeRunner fast("Resize", "", f.opset, f.attrs, Device::cpu);
      expect_same_as_reference(ref, fast, {awkward_tensor(shape, 7), Tensor(), vec<float>(f.scales)}, &pool2);
    }
  }
}

TEST(CpuResize, OtherFormsAndErrorsAreTheReferences) {
  ThreadPool pool2(2);
  const std::vector<std::pair<Attrs, std::vector<float>>> forms = {
      {{{"mode", string_attr("nearest")}}, {1, 1, 2, 2}},
      {{{"mode", string_attr("linear")}}, {1, 2, 2, 2}},  // the channel axis changes
      {{{"mode", string_attr("linear")}, {"coordinate_transformation_mode", string_attr("tf_crop_and_resize")}},
       {1, 1, 2, 2}},
  };
  for (const auto& [attrs, scales] : forms) {
    std::vector<Tensor> in = {random_tensor({1, 2, 4, 4}, 5), vec<float>({0, 0, 0.2f, 0.1f, 1, 1, 0.9f, 0.7f}),
                              vec<float>(scales)};
    NodeRunner ref("Resize", "", 13, attrs, Device::ref);
    NodeRunner fast("Resize", "", 13, attrs, Device::cpu);
    expect_same_as_reference(ref, fast, in, &pool2);
  }
  NodeRunner fast("Resize", "", 13, {{"mode", string_attr("linear")}}, Device::cpu);
  auto both = fast.run({random_tensor({1, 1, 2, 2}, 1), Tensor(), vec<float>({1, 1, 2, 2}), vec<int64_t>({1, 1, 4, 4})});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("exactly one of scales and sizes"), std::string::npos) << both.status().to_string();
  auto bad = fast.run({random_tensor({1, 1, 2, 2}, 1), Tensor(), vec<float>({1, 1, -2, 2})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("scales[2]"), std::string::npos) << bad.status().to_string();
}

}  // namespace
}  // namespace osprey::testing
