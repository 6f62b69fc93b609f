// Einsum as a batched matrix product on the CPU kernel against the reference: operands and
// outputs viewed through their own strides (transposed operands, groups of labels merged,
// groups in any order), copied first where a group's labels are not adjacent, an output
// permuted afterwards, dot and outer products, an empty contraction, one and two threads; the
// forms it leaves to the reference (ellipses, diagonals, single-operand sums, three
// operands) give the reference's results, and labels of different sizes its error.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

struct Case {
  std::string eq;
  Shape a, b;
};

TEST(CpuEinsum, BatchedProductsMatchTheReference) {
  const std::vector<Case> cases = {
      {"bhid,bhjd->bhij", {1, 12, 32, 16}, {1, 12, 24, 16}},
      {"bhij,bhjd->bhid", {2, 3, 8, 9}, {2, 3, 9, 5}},
      {"bij,bjk->bik", {3, 4, 5}, {3, 5, 6}},
      {"ij,jk->ik", {7, 9}, {9, 4}},
      {"ij,kj->ik", {7, 9}, {4, 9}},
      {"bnd,md->bnm", {2, 6, 8}, {5, 8}},
      {"ik,kj->ji", {3, 4}, {4, 5}},
      {"abc,cd->abd", {2, 3, 4}, {4, 5}},
      {"bac,bcd->abd", {2, 3, 4}, {2, 4, 5}},
      {"abc,cd->bad", {2, 3, 4}, {4, 5}},
      {"abc,cd->bda", {2, 3, 4}, {4, 5}},
      {"i,i->", {17}, {17}},
      {"i,j->ij", {5}, {6}},
      {"b i j , b j k -> b i k", {2, 3, 4}, {2, 4, 2}},
  };
  ThreadPool pool2(2);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.eq);
    const Attrs attrs = {{"equation", string_attr(c.eq)}};
    const std::vector<Tensor> in = {random_tensor(c.a, 3), random_tensor(c.b, 4)};
    NodeRunner ref("Einsum", "", 12, attrs, Device::ref);
    NodeRunner fast("Einsum", "", 12, attrs, Device::cpu, {Tensor(), Tensor()});
    expect_close_to_reference(ref, fast, in, &pool2, 2e-6);
  }
  // An empty contraction gives zeros.
  const Attrs attrs = {{"equation", string_attr("ij,jk->ik")}};
  NodeRunner fast("Einsum", "", 12, attrs, Device::cpu);
  auto zero = fast.run({Tensor(DType::kFloat32, {3, 0}), Tensor(DType::kFloat32, {0, 2})});
  ASSERT_TRUE(zero.ok()) << zero.status().to_string();
  ASSERT_EQ(zero->shape(), (Shape{3, 2}));
  for (int64_t i = 0; i < zero->numel(); ++i) EXPECT_EQ(zero->data<float>()[i], 0.0f);
}

TEST(CpuEinsum, OtherFormsAndErrorsAreTheReferences) {
  ThreadPool pool2(2);
  const std::vector<std::pair<std::string, std::vector<Tensor>>> forms = {
      {"ii->i", {random_tensor({4, 4}, 1)}},
      {"...ij,...jk->...ik", {random_tensor({2, 3, 4}, 1), random_tensor({2, 4, 5}, 2)}},
      {"ij,jk->i", {random_tensor({3, 4}, 1), random_tensor({4, 5}, 2)}},
      {"ij,jk,kl->il", {random_tensor({2, 3}, 1), random_tensor({3, 4}, 2), random_tensor({4, 5}, 3)}},
      {"iij,jk->ik", {random_tensor({3, 3, 4}, 1), random_tensor({4, 5}, 2)}},
  };
  for (const auto& [eq, in] : forms) {
    SCOPED_TRACE(eq);
    const Attrs attrs = {{"equation", string_attr(eq)}};
    NodeRunner ref("Einsum", "", 12, attrs, Device::ref);
    NodeRunner fast("Einsum", "", 12, attrs, Device::cpu);
    expect_same_as_reference(ref, fast, in, &pool2);
  }
  // Labels of different sizes (a batch label of 2 and 1 included): the reference's error.
  NodeRunner bad_ref("Einsum", "", 12, {{"equation", string_attr("bij,bjk->bik")}}, Device::ref);
  NodeRunner bad("Einsum", "", 12, {{"equation", string_attr("bij,bjk->bik")}}, Device::cpu);
  for (const Shape& b : {Shape{1, 4, 5}, Shape{2, 3, 5}}) {
    const std::vector<Tensor> in = {random_tensor({2, 3, 4}, 1), random_tensor(b, 2)};
    auto want = bad_ref.run(in);
    auto got = bad.run(in);
    ASSERT_FALSE(got.ok());
    ASSERT_FALSE(want.ok());
    EXPECT_EQ(got.status().message(), want.status().message());
  }
  NodeRunner rank("Einsum", "", 12, {{"equation", string_attr("ijk,jk->i")}}, Device::cpu);
  EXPECT_FALSE(rank.run({random_tensor({3, 4}, 1), random_tensor({4, 5}, 2)}).ok());
}

}  // namespace
}  // namespace osprey::testing
