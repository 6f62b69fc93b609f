// Pad on the row-copy kernel (pad_cpu.cc) against the reference, bit for bit: constant (with
// and without constant_value), reflect and edge modes; float32, int64 and uint8; ranks 1 to 4;
// growing, cropping (negative pads) and mixed; rows entirely in the padding; one and two
// threads. Wrap mode, an axes input and malformed calls get the reference's results and errors.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

Tensor counting(DType dt, const Shape& shape) {
  Tensor t(dt, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dt == DType::kFloat32) t.data<float>()[i] = static_cast<float>(i) * 0.25f - 3.0f;
    else if (dt == DType::kInt64) t.data<int64_t>()[i] = i * 7 - 11;
    else t.data<uint8_t>()[i] = static_cast<uint8_t>(i * 3);
  }
  return t;
}

TEST(CpuPad, MatchesReferenceBitForBit) {
  ThreadPool pool2(2);
  struct Case {
    Shape shape;
    std::vector<int64_t> pads;
  };
  const std::vector<Case> cases = {
      {{1, 4, 6, 5}, {0, 0, 1, 1, 0, 0, 1, 1}},
      {{2, 3, 5, 4}, {0, 1, 2, 3, 1, 0, 1, 2}},
      {{1, 2, 6, 7}, {0, 0, -1, 2, 0, 0, 1, -3}},  // crop and grow
      {{7}, {3, 2}},
      {{3, 8}, {0, -2, 0, -3}},
      {{2, 3, 4}, {1, 0, 0, 1, 0, 0}},  // whole rows of padding
  };
  for (const char* mode : {"constant", "reflect", "edge"})
    for (DType dt : {DType::kFloat32, DType::kInt64, DType::kUInt8})
      for (const Case& c : cases)
        for (bool with_value : {false, true}) {
          if (with_value && std::string(mode) != "constant") continue;
          SCOPED_TRACE(std::string(mode) + " " + dtype_name(dt) + " " + shape_to_string(c.shape) +
                       (with_value ? " value" : ""));
          std::vector<Tensor> in = {counting(dt, c.shape), vec<int64_t>(c.pads)};
          if (with_value) in.push_back(counting(dt, {}));  // a scalar: -3, -11 or 0
          if (with_value && dt == DType::kUInt8) in.back().data<uint8_t>()[0] = 200;
          const Attrs attrs = {{"mode", string_attr(mode)}};
          expect_same_as_reference(NodeRunner("Pad", "", 13, attrs, Device::ref, {}, dt),
                                   NodeRunner("Pad", "", 13, attrs, Device::cpu, {}, dt), in, &pool2);
        }
}

TEST(CpuPad, OtherFormsAndErrorsAreTheReferences) {
  const Tensor x = counting(DType::kFloat32, {2, 3});
  struct Case {
    const char* mode;
    std::vector<Tensor> in;
    int opset;
  };
  const std::vector<Case> cases = {
      {"wrap", {x, vec<int64_t>({1, 1, 1, 1})}, 19},                        // wrap: the reference
      {"constant", {x, vec<int64_t>({1, 2}), Tensor(), vec<int64_t>({1})}, 18},  // axes input
      {"constant", {x, vec<int64_t>({1, 1, 1})}, 13},                        // pads of the wrong length
      {"reflect", {counting(DType::kFloat32, {0, 3}), vec<int64_t>({1, 0, 1, 0})}, 13},  // empty axis
      {"constant", {x, vec<int64_t>({0, -3, 0, -1})}, 13},                   // crops past the size
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.mode);
    const Attrs attrs = {{"mode", string_attr(c.mode)}};
    NodeRunner ref("Pad", "", c.opset, attrs, Device::ref);
    NodeRunner cpu("Pad", "", c.opset, attrs, Device::cpu);
    auto want = ref.run(c.in);
    auto got = cpu.run(c.in);
    ASSERT_EQ(got.ok(), want.ok()) << got.status().to_string() << " / " << want.status().to_string();
    if (want.ok()) EXPECT_TRUE(same_bytes(*got, *want));
    else EXPECT_EQ(got.status().to_string(), want.status().to_string());
  }
}

}  // namespace
}  // namespace osprey::testing
