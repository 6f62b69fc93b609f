// com.osprey Attention on oneDNN against the reference kernel (the oracle): batch 1-3, sequence
// 1/7/128 (and a cross-attention K/V length), 1 and 12 heads, head sizes 1/32/64, masks
// [B,1,1,Sk], [B,1,Sq,Sk], [1,1,1,Sk], [Sk], [1,H,1,1], [B,H,Sq,1], [B,H,Sq,Sk] and none, one
// and two threads; then bad inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "cpu_test_harness.h"
#include "kernels/cpu/attention_bf16.h"

namespace osprey::testing {
namespace {

enum class Mask { kNone, kPerKey, kPerQuery, kShared, kVector, kPerHead, kQueryColumn, kFull };

struct Case {
  int64_t b, sq, sk, h, d;
  Mask mask;
};

Shape mask_shape(const Case& c) {
  switch (c.mask) {
    case Mask::kPerKey: return {c.b, 1, 1, c.sk};
    case Mask::kPerQuery: return {c.b, 1, c.sq, c.sk};
    case Mask::kShared: return {1, 1, 1, c.sk};
    case Mask::kVector: return {c.sk};
    case Mask::kPerHead: return {1, c.h, 1, 1};
    case Mask::kQueryColumn: return {c.b, c.h, c.sq, 1};
    case Mask::kFull: return {c.b, c.h, c.sq, c.sk};
    case Mask::kNone: break;
  }
  return {};
}

// 0 or -10000 like a BERT padding mask (every third key masked), plus small noise so that a
// mask read at the wrong offset shows. A mask constant along the keys gets the noise only: a
// -10000 there would cancel in the softmax and only cost float32 precision (ulp 1e-3 at 1e4).
Tensor make_mask(const Shape& s, uint32_t seed) {
  Tensor m = random_tensor(s, seed);
  const bool per_key = !s.empty() && s.back() > 1;
  for (int64_t i = 0; i < m.numel(); ++i)
    m.data<float>()[i] = (per_key && i % 3 == 2 ? -10000.0f : 0.0f) + 0.25f * m.data<float>()[i];
  return m;
}

std::string name(const Case& c) {
  std::string s;
  for (int64_t v : {c.b, c.sq, c.sk, c.h, c.d, static_cast<int64_t>(c.mask)})
    s.append(std::to_string(v)).append(" ");
  return s;  // B Sq Sk H D mask
}

// The cpu kernel against the reference on case c. bf16 (fast mode's compute_precision): within
// bf16 rounding of the float32 reference, and not the float32 result itself.
void check(const Case& c, float scale, ThreadPool* pool, bool bf16 = false) {
  SCOPED_TRACE(name(c) + (bf16 ? "bf16" : ""));
  const Attrs attrs = {{"num_heads", int_attr(c.h)}, {"scale", float_attr(scale)}};
  Attrs fast_attrs = attrs;
  if (bf16) fast_attrs["compute_precision"] = string_attr("bf16");
  NodeRunner ref("Attention", "com.osprey", 1, attrs, Device::ref);
  NodeRunner fast("Attention", "com.osprey", 1, fast_attrs, Device::cpu, {Tensor()});
  ASSERT_TRUE(ref.found() && fast.found());
  const int64_t hd = c.h * c.d;
  std::vector<Tensor> in = {random_tensor({c.b, c.sq, hd}, 1), random_tensor({c.b, c.sk, hd}, 2),
                            random_tensor({c.b, c.sk, hd}, 3)};
  if (c.mask != Mask::kNone) in.push_back(make_mask(mask_shape(c), 4));
  auto want = ref.run(in);
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  auto got = fast.run(in, pool);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  expect_close(*got, *want, bf16 ? 2e-2 : 1e-4);
  if (bf16 && c.sk > 1 && c.d > 1) {
    EXPECT_FALSE(bit_equal(*got, *want)) << "the float32 result";
  }
  auto again = fast.run(in, pool);  // from the thread's kept work buffer
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(bit_equal(*again, *got));
}

TEST(CpuAttention, MatchesReferenceOnShapesAndMasks) {
  const std::vector<Case> cases = {
      {1, 7, 7, 1, 1, Mask::kNone},          {2, 7, 7, 12, 32, Mask::kPerKey},
      {3, 7, 7, 12, 1, Mask::kPerQuery},     {1, 128, 128, 12, 32, Mask::kPerKey},
      {2, 128, 128, 1, 64, Mask::kShared},   {1, 1, 1, 12, 64, Mask::kPerKey},
      {3, 1, 1, 1, 32, Mask::kNone},         {2, 1, 7, 12, 32, Mask::kPerQuery},
      {2, 7, 1, 12, 32, Mask::kPerKey},      {3, 7, 128, 1, 64, Mask::kVector},
      {1, 128, 7, 12, 1, Mask::kShared},     {2, 7, 7, 12, 32, Mask::kPerHead},
      {2, 7, 5, 12, 32, Mask::kQueryColumn}, {2, 7, 5, 3, 32, Mask::kFull},
      // Head sizes and key counts off the 16-column panels; query rows in several blocks
      // (8192 / 1000 = 8 rows per block) with a tail tile.
      {1, 13, 37, 2, 17, Mask::kPerQuery},   {2, 21, 1000, 3, 40, Mask::kFull},
  };
  ThreadPool pool2(2);
  for (const auto& c : cases) {
    check(c, 1.0f / std::sqrt(static_cast<float>(c.d)), nullptr);
    check(c, 0.5f, &pool2);
  }
}

TEST(CpuAttention, Bf16MatchesReferenceWithinBf16Rounding) {
  // compute_precision = "bf16" (fast mode): Q, scale * K, V and the probabilities rounded to
  // bfloat16, float32 accumulation. Odd head sizes and key counts leave half-filled pairs.
  if (!cpu::attention_bf16_available()) {
    NodeRunner r("Attention", "com.osprey", 1,
                 {{"num_heads", int_attr(1)}, {"compute_precision", string_attr("bf16")}},
                 Device::cpu);
    auto y = r.run({random_tensor({1, 2, 4}, 1), random_tensor({1, 2, 4}, 2),
                    random_tensor({1, 2, 4}, 3)});
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.status().code(), StatusCode::kFailedPrecondition);
    GTEST_SKIP() << "no avx512_bf16 on this CPU: checked that bf16 attention is refused";
  }
  const std::vector<Case> cases = {
      {1, 7, 7, 1, 1, Mask::kNone},          {2, 7, 7, 12, 32, Mask::kPerKey},
      {1, 128, 128, 12, 32, Mask::kPerKey},  {2, 128, 128, 1, 64, Mask::kShared},
      {2, 1, 7, 12, 32, Mask::kPerQuery},    {2, 7, 5, 3, 32, Mask::kFull},
      {1, 13, 37, 2, 17, Mask::kPerQuery},   {2, 21, 1000, 3, 40, Mask::kFull},
      {1, 9, 33, 2, 63, Mask::kPerHead},
  };
  ThreadPool pool2(2);
  for (const auto& c : cases) {
    check(c, 1.0f / std::sqrt(static_cast<float>(c.d)), nullptr, /*bf16=*/true);
    check(c, 0.5f, &pool2, /*bf16=*/true);
  }
}

// Q, K and V side by side in one [B, S, 3*H*D] tensor.
Tensor packed_qkv(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t b = q.dim(0), s = q.dim(1), hd = q.dim(2);
  Tensor t(DType::kFloat32, {b, s, 3 * hd});
  const Tensor* parts[] = {&q, &k, &v};
  for (int64_t r = 0; r < b * s; ++r)
    for (int i = 0; i < 3; ++i)
      std::memcpy(t.data<float>() + (r * 3 + i) * hd, parts[i]->data<float>() + r * hd,
                  static_cast<size_t>(hd) * sizeof(float));
  return t;
}

// Attention(QKV, "", "", mask?): the reference reads the packed rows exactly as it reads three
// tensors (bit for bit), and the cpu kernel (float32, and bf16 where available) matches it.
TEST(CpuAttention, PackedQkvMatchesSeparateInputs) {
  const std::vector<Case> cases = {
      {1, 7, 7, 1, 1, Mask::kNone},         {2, 7, 7, 12, 32, Mask::kPerKey},
      {1, 128, 128, 12, 32, Mask::kPerKey}, {2, 13, 13, 2, 17, Mask::kFull},
      {3, 1, 1, 12, 64, Mask::kPerQuery},
  };
  ThreadPool pool2(2);
  for (const auto& c : cases)
    for (bool bf16 : {false, true}) {
      if (bf16 && !cpu::attention_bf16_available()) continue;
      SCOPED_TRACE(name(c) + (bf16 ? "bf16" : ""));
      Attrs attrs = {{"num_heads", int_attr(c.h)}};
      NodeRunner ref("Attention", "com.osprey", 1, attrs, Device::ref);
      if (bf16) attrs["compute_precision"] = string_attr("bf16");
      NodeRunner fast("Attention", "com.osprey", 1, attrs, Device::cpu);
      const int64_t hd = c.h * c.d;
      const Tensor q = random_tensor({c.b, c.sq, hd}, 11), k = random_tensor({c.b, c.sq, hd}, 12),
                   v = random_tensor({c.b, c.sq, hd}, 13);
      const Tensor mask = c.mask == Mask::kNone ? Tensor() : make_mask(mask_shape(c), 14);
      std::vector<Tensor> separate = {q, k, v}, packed = {packed_qkv(q, k, v), Tensor(), Tensor()};
      if (mask.defined()) separate.push_back(mask), packed.push_back(mask);
      auto want = ref.run(separate);
      auto ref_packed = ref.run(packed);
      ASSERT_TRUE(want.ok() && ref_packed.ok()) << ref_packed.status().to_string();
      EXPECT_TRUE(bit_equal(*ref_packed, *want));
      auto sep = fast.run(separate, &pool2);
      auto got = fast.run(packed, &pool2);
      ASSERT_TRUE(sep.ok() && got.ok()) << got.status().to_string();
      ASSERT_EQ(got->shape(), (Shape{c.b, c.sq, hd}));
      EXPECT_TRUE(bit_equal(*got, *sep));  // the same arithmetic on the same values
      expect_close(*got, *want, bf16 ? 2e-2 : 1e-4);
    }
  // Packed Q/K/V whose last dim is not 3 * hidden, and K given without V.
  for (Device dev : {Device::ref, Device::cpu}) {
    NodeRunner r("Attention", "com.osprey", 1, {{"num_heads", int_attr(2)}}, dev);
    auto odd = r.run({random_tensor({1, 3, 8}, 1), Tensor(), Tensor()});
    ASSERT_FALSE(odd.ok());
    EXPECT_EQ(odd.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(odd.status().message().find("multiple of 3"), std::string::npos)
        << odd.status().to_string();
    auto heads = r.run({random_tensor({1, 3, 9}, 1), Tensor(), Tensor()});
    ASSERT_FALSE(heads.ok());
    EXPECT_NE(heads.status().message().find("divide the hidden size 3"), std::string::npos)
        << heads.status().to_string();
    auto no_v = r.run({random_tensor({1, 3, 12}, 1), random_tensor({1, 3, 12}, 2), Tensor()});
    ASSERT_FALSE(no_v.ok());
    EXPECT_NE(no_v.status().message().find("input V is required"), std::string::npos);
  }
}

TEST(CpuAttention, FullyMaskedKeysGetNoWeight) {
  // Every key but the first masked by -1e9: each output row is V's first row of its head.
  const Case c = {2, 5, 5, 3, 4, Mask::kPerKey};
  Tensor mask(DType::kFloat32, {2, 1, 1, 5});
  for (int64_t i = 0; i < mask.numel(); ++i) mask.data<float>()[i] = i % 5 == 0 ? 0.0f : -1e9f;
  const Attrs attrs = {{"num_heads", int_attr(c.h)}, {"scale", float_attr(0.5f)}};
  NodeRunner fast("Attention", "com.osprey", 1, attrs, Device::cpu, {Tensor()});
  Tensor v = random_tensor({2, 5, 12}, 7);
  auto got = fast.run({random_tensor({2, 5, 12}, 5), random_tensor({2, 5, 12}, 6), v, mask});
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t e = 0; e < 12; ++e)
        EXPECT_NEAR(got->data<float>()[(b * 5 + i) * 12 + e], v.data<float>()[b * 5 * 12 + e],
                    1e-5);
}

TEST(CpuAttention, BadInputsNameWhatIsWrong) {
  struct Bad {
    std::vector<Shape> shapes;
    int64_t heads;
    const char* want;
  };
  const std::vector<Bad> bad = {
      {{{2, 3, 8, 1}, {2, 3, 8}, {2, 3, 8}}, 2, "Q must be rank 3"},
      {{{2, 3, 8}, {2, 3}, {2, 3, 8}}, 2, "K must be rank 3"},
      {{{2, 3, 8}, {2, 4, 8}, {2, 3, 8}}, 2, "must have one shape"},
      {{{2, 3, 8}, {1, 3, 8}, {1, 3, 8}}, 2, "batch and hidden size"},
      {{{2, 3, 8}, {2, 3, 8}, {2, 3, 8}}, 3, "num_heads 3"},
      {{{2, 3, 8}, {2, 3, 8}, {2, 3, 8}}, 0, "num_heads 0"},
      {{{2, 3, 8}, {2, 3, 8}, {2, 3, 8}, {2, 1, 1, 4}}, 2, "mask [2,1,1,4] is not broadcastable"},
      {{{2, 3, 8}, {2, 3, 8}, {2, 3, 8}, {3, 1, 1, 3}}, 2, "mask [3,1,1,3] is not broadcastable"},
      {{{2, 3, 8}, {2, 3, 8}, {2, 3, 8}, {1, 2, 1, 1, 3}}, 2, "mask [1,2,1,1,3] must have rank"},
  };
  for (Device dev : {Device::ref, Device::cpu})
    for (const auto& c : bad) {
      SCOPED_TRACE(std::string(device_name(dev)) + " " + c.want);
      NodeRunner r("Attention", "com.osprey", 1, {{"num_heads", int_attr(c.heads)}}, dev);
      ASSERT_TRUE(r.found());
      std::vector<Tensor> in;
      for (const auto& s : c.shapes) in.push_back(random_tensor(s, 1));
      auto out = r.run(in);
      ASSERT_FALSE(out.ok());
      EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(out.status().message().find(c.want), std::string::npos) << out.status().to_string();
    }
  // A missing V and an int mask.
  NodeRunner r("Attention", "com.osprey", 1, {{"num_heads", int_attr(2)}}, Device::cpu);
  auto missing = r.run({random_tensor({1, 2, 4}, 1), random_tensor({1, 2, 4}, 2)});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("input V is required"), std::string::npos);
  Tensor int_mask(DType::kInt64, {1, 1, 1, 2});
  auto typed = r.run({random_tensor({1, 2, 4}, 1), random_tensor({1, 2, 4}, 2),
                      random_tensor({1, 2, 4}, 3), int_mask});
  ASSERT_FALSE(typed.ok());
  EXPECT_NE(typed.status().message().find("mask must be float32"), std::string::npos);
}

TEST(CpuAttention, EmptyKeysGiveZerosAndLimitsHold) {
  const Attrs attrs = {{"num_heads", int_attr(2)}};
  NodeRunner fast("Attention", "com.osprey", 1, attrs, Device::cpu);
  NodeRunner ref("Attention", "com.osprey", 1, attrs, Device::ref);
  const std::vector<Tensor> in = {random_tensor({1, 3, 4}, 1), Tensor(DType::kFloat32, {1, 0, 4}),
                                  Tensor(DType::kFloat32, {1, 0, 4})};
  for (const NodeRunner* r : {&fast, &ref}) {
    auto y = r->run(in);
    ASSERT_TRUE(y.ok()) << y.status().to_string();
    ASSERT_EQ(y->shape(), (Shape{1, 3, 4}));
    for (int64_t i = 0; i < y->numel(); ++i) EXPECT_EQ(y->data<float>()[i], 0.0f);
  }
  // 65536 keys of head size 16: K's packed panels alone (2^20 floats) with V's exceed the
  // harness's 2^20-element limit: a clear error.
  auto big = fast.run({random_tensor({1, 1, 32}, 1), random_tensor({1, 65536, 32}, 2),
                       random_tensor({1, 65536, 32}, 3)});
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted) << big.status().to_string();
}

// 1100 tokens and 2 heads: all heads' scores (2.4M floats) would pass the harness's 2^20-element
// limit, but the kernel holds only one head's panels and a block of score rows. Checked
// against a double-precision loop (the reference itself would need the whole score tensor).
TEST(CpuAttention, LongSequencesNeedNoScoreTensor) {
  const int64_t S = 1100, H = 2, D = 4, HD = H * D;
  const float scale = 0.5f;
  const Attrs attrs = {{"num_heads", int_attr(H)}, {"scale", float_attr(scale)}};
  NodeRunner fast("Attention", "com.osprey", 1, attrs, Device::cpu);
  const Tensor q = random_tensor({1, S, HD}, 21), k = random_tensor({1, S, HD}, 22),
               v = random_tensor({1, S, HD}, 23);
  ThreadPool pool2(2);
  auto got = fast.run({q, k, v}, &pool2);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  const float *qd = q.data<float>(), *kd = k.data<float>(), *vd = v.data<float>();
  std::vector<double> w(static_cast<size_t>(S));
  double worst = 0;
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < S; i += 7) {  // every 7th query row of each head
      double mx = -1e300, sum = 0;
      for (int64_t j = 0; j < S; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d) dot += double(qd[i * HD + h * D + d]) * kd[j * HD + h * D + d];
        w[size_t(j)] = dot * scale;
        mx = std::max(mx, w[size_t(j)]);
      }
      for (int64_t j = 0; j < S; ++j) sum += (w[size_t(j)] = std::exp(w[size_t(j)] - mx));
      for (int64_t d = 0; d < D; ++d) {
        double want = 0;
        for (int64_t j = 0; j < S; ++j) want += w[size_t(j)] / sum * vd[j * HD + h * D + d];
        worst = std::max(worst, std::fabs(want - got->data<float>()[i * HD + h * D + d]));
      }
    }
  EXPECT_LT(worst, 1e-5);
}

}  // namespace
}  // namespace osprey::testing
