// osprey_tile_bench: the register-tile kernels against oneDNN 2.6 on one thread, in one process,
// interleaved (A B A B, medians), on the same random data, with the largest difference between
// their outputs. `--cold` evicts the caches (a 64 MiB sweep) before every call, as inside a
// model whose weights stream through the last-level cache. Sections:
//   conv3x3  channels-last 3x3 convolutions (+ bias + Relu): the tile form vs oneDNN's direct nhwc
//   conv1x1  1x1 convolutions with a residual sum: oneDNN nhwc vs nChw8c (the layout question)
//   winograd ResNet50's stride-1 3x3 layers: our F(2x2, 3x3) and F(4x4, 3x3) forms
//             (conv_winograd_nhwc.h) over nhwc vs oneDNN's direct nhwc primitive and its
//             Winograd primitive over nChw16c (no reorders around it: a bound in its favour)
//   attention a MiniLM / BERT-base layer's heads (128 tokens): tiles vs the oneDNN batched matmuls
//   attention_bf16  the same layer on the bf16 pair tiles (fast mode) vs the float32 tiles, on
//             CPUs with avx512_bf16
//   products  an encoder's float32 products with a constant B (--rows, 128; --threads, 1): the form matmul_core
//             picks (panel_product on AVX-512) vs oneDNN's matmul, each over 12 copies of B in turn (a layer's weights each,
//             streamed from memory as in the model)
// Usage: osprey_tile_bench [--cold] [--rounds N] [--rows M] [--threads T] [--only SECTION]
// (OMP_NUM_THREADS=1 for oneDNN's one thread; OMP_NUM_THREADS=T with --threads T)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/cpu/attention_bf16.h"
#include "kernels/cpu/attention_tiles.h"
#include "kernels/cpu/conv_tiles.h"
#include "kernels/cpu/conv_winograd_nhwc.h"
#include "kernels/cpu/matmul_core.h"
#include "kernels/cpu/row_kernels.h"

namespace {

using namespace osprey::cpu;
using dnnl::memory;
using Tag = memory::format_tag;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

bool g_cold = false;
void maybe_evict() {
  static std::vector<char> junk(size_t{64} << 20);
  if (!g_cold) return;
  for (size_t i = 0; i < junk.size(); i += 64) junk[i]++;
}

struct Engine {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{eng};
};

// A oneDNN convolution over given layouts, with bias, an optional sum and Relu.
struct DnnlConv {
  dnnl::convolution_forward prim;
  std::unordered_map<int, memory> args;
  std::string impl;
  DnnlConv(Engine& e, int64_t C, int64_t M, int64_t H, int64_t K, int64_t S, bool sum, Tag tag,
           float* x, const std::vector<float>& w_oihw, float* b, float* y,
           dnnl::algorithm alg = dnnl::algorithm::convolution_direct) {
    const int64_t pad = K / 2, OH = (H + 2 * pad - K) / S + 1;
    const auto f32 = memory::data_type::f32;
    memory::desc sd({1, C, H, H}, f32, tag), dd({1, M, OH, OH}, f32, tag),
        wd({M, C, K, K}, f32, Tag::any), bd({M}, f32, Tag::a);
    dnnl::post_ops po;
    if (sum) po.append_sum(1.0f);
    po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, sd, wd, bd, dd,
                                        {S, S}, {pad, pad}, {pad, pad}),
        attr, e.eng);
    memory plain_w({{M, C, K, K}, f32, Tag::oihw}, e.eng, const_cast<float*>(w_oihw.data()));
    memory packed_w(pd.weights_desc(), e.eng);
    dnnl::reorder(plain_w, packed_w).execute(e.stream, plain_w, packed_w);
    prim = dnnl::convolution_forward(pd);
    args = {{DNNL_ARG_SRC, memory(sd, e.eng, x)},
            {DNNL_ARG_WEIGHTS, packed_w},
            {DNNL_ARG_BIAS, memory(bd, e.eng, b)},
            {DNNL_ARG_DST, memory(dd, e.eng, y)}};
    impl = pd.impl_info_str();
  }
  void run(Engine& e) {
    prim.execute(e.stream, args);
    e.stream.wait();
  }
};

void conv3x3(Engine& e, int rounds) {
  std::printf("\n## conv3x3: tile form vs oneDNN direct, channels-last, bias + Relu%s\n",
              g_cold ? ", cold caches" : "");
  std::printf("| C -> M | image | stride | tiles ms | GFLOP/s | oneDNN ms | GFLOP/s | impl | ratio | max diff |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  struct P { int64_t C, M, H, S; };
  for (const P q : {P{64, 64, 56, 1}, P{96, 96, 28, 1}, P{128, 128, 28, 1}, P{128, 128, 56, 2},
                    P{256, 256, 14, 1}, P{512, 512, 7, 1}}) {
    const int64_t OH = (q.H + 2 - 3) / q.S + 1;
    NhwcConv p{1, q.C, q.H, q.H, q.M, 3, 3, OH, OH};
    p.stride_h = p.stride_w = q.S;
    p.pad_top = p.pad_left = 1;
    p.has_bias = true;
    auto x = random_floats(static_cast<size_t>(q.H * q.H * q.C), 1);
    auto w = random_floats(static_cast<size_t>(q.M * q.C * 9), 2);
    auto b = random_floats(static_cast<size_t>(q.M), 3);
    std::vector<float> y1(static_cast<size_t>(OH * OH * q.M)), y2(y1.size());
    auto panels = std::make_shared<std::vector<float>>(static_cast<size_t>(conv_panel_floats(q.M, q.C, 3, 3)));
    pack_conv_panels(w.data(), q.M, q.C, 3, 3, panels->data());
    const TileConv t = make_tile_conv(p, TileAct::kRelu, 0, 0, panels);
    DnnlConv d(e, q.C, q.M, q.H, 3, q.S, false, Tag::nhwc, x.data(), w, b.data(), y2.data());
    std::vector<double> ta, tb;
    for (int i = 0; i < rounds + 3; ++i) {
      maybe_evict();
      const double t0 = now();
      (void)run_tile_conv(best_vector_isa(), t, x.data(), b.data(), y1.data(), nullptr, int64_t{1} << 30);
      const double t1 = now();
      maybe_evict();
      const double t2 = now();
      d.run(e);
      const double t3 = now();
      if (i >= 3) ta.push_back(t1 - t0), tb.push_back(t3 - t2);
    }
    double diff = 0;
    for (size_t i = 0; i < y1.size(); ++i) diff = std::max(diff, double(std::fabs(y1[i] - y2[i])));
    const double flops = 2.0 * q.C * q.M * 9 * OH * OH, a = median(ta), bt = median(tb);
    std::printf("| %ld -> %ld | %ldx%ld | %ld | %.3f | %.1f | %.3f | %.1f | %s | %.2fx | %.1e |\n",
                long(q.C), long(q.M), long(q.H), long(q.H), long(q.S), a * 1e3, flops / a / 1e9,
                bt * 1e3, flops / bt / 1e9, d.impl.c_str(), a / bt, diff);
  }
}

void conv1x1(Engine& e, int rounds) {
  std::printf("\n## conv1x1 with residual sum + Relu: oneDNN over nhwc vs nChw8c%s\n",
              g_cold ? ", cold caches" : "");
  std::printf("| C -> M | image | nhwc ms | GFLOP/s | nChw8c ms | GFLOP/s | nChw8c / nhwc |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
  struct P { int64_t C, M, H; };
  for (const P q : {P{64, 256, 56}, P{128, 512, 28}, P{256, 1024, 14}}) {
    auto x = random_floats(static_cast<size_t>(q.H * q.H * q.C), 4);
    auto w = random_floats(static_cast<size_t>(q.M * q.C), 5);
    auto b = random_floats(static_cast<size_t>(q.M), 6);
    std::vector<float> y1(static_cast<size_t>(q.H * q.H * q.M)), y2(y1.size());
    DnnlConv nhwc(e, q.C, q.M, q.H, 1, 1, true, Tag::nhwc, x.data(), w, b.data(), y1.data());
    DnnlConv blocked(e, q.C, q.M, q.H, 1, 1, true, Tag::nChw8c, x.data(), w, b.data(), y2.data());
    std::vector<double> ta, tb;
    for (int i = 0; i < rounds + 3; ++i) {
      std::fill(y1.begin(), y1.end(), 0.0f);  // the sum's start, kept bounded across rounds
      std::fill(y2.begin(), y2.end(), 0.0f);
      maybe_evict();
      const double t0 = now();
      nhwc.run(e);
      const double t1 = now();
      maybe_evict();
      const double t2 = now();
      blocked.run(e);
      const double t3 = now();
      if (i >= 3) ta.push_back(t1 - t0), tb.push_back(t3 - t2);
    }
    const double flops = 2.0 * q.C * q.M * q.H * q.H, a = median(ta), bt = median(tb);
    std::printf("| %ld -> %ld | %ldx%ld | %.3f | %.1f | %.3f | %.1f | %.2fx |\n", long(q.C),
                long(q.M), long(q.H), long(q.H), a * 1e3, flops / a / 1e9, bt * 1e3,
                flops / bt / 1e9, bt / a);
  }
}

void winograd(Engine& e, int rounds) {
  std::printf("\n## winograd: our F(2x2, 3x3) and F(4x4, 3x3) forms vs oneDNN direct (nhwc) and "
              "Winograd (nChw16c), bias + Relu%s\n", g_cold ? ", cold caches" : "");
  if (!panel_product_supported()) {
    std::printf("(the form needs AVX-512)\n");
    return;
  }
  std::printf("| C -> M | image | F(2x2) ms | F(4x4) ms | direct ms | oneDNN Winograd ms | "
              "F(2x2) / direct | F(4x4) / direct | oneDNN Winograd / direct | max diff F(2x2), "
              "F(4x4) vs direct |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  struct P { int64_t C, H; };
  for (const P q : {P{64, 56}, P{128, 28}, P{256, 14}}) {
    const int64_t C = q.C, H = q.H;
    NhwcConv p{1, C, H, H, C, 3, 3, H, H};
    p.pad_top = p.pad_left = 1;
    p.has_bias = true;
    auto x = random_floats(static_cast<size_t>(H * H * C), 1);
    auto w = random_floats(static_cast<size_t>(C * C * 9), 2);
    auto b = random_floats(static_cast<size_t>(C), 3);
    std::vector<float> y[4];
    for (auto& v : y) v.resize(static_cast<size_t>(H * H * C));
    WinogradNhwcConv ours[2];
    for (int f = 0; f < 2; ++f) {
      ours[f].p = p;
      ours[f].w = pack_winograd_nhwc_weights(w.data(), C, C, f == 0 ? 2 : 4);
      ours[f].clamp = true, ours[f].lo = 0.0f, ours[f].hi = INFINITY;
    }
    DnnlConv direct(e, C, C, H, 3, 1, false, Tag::nhwc, x.data(), w, b.data(), y[2].data());
    DnnlConv wino(e, C, C, H, 3, 1, false, Tag::nChw16c, x.data(), w, b.data(), y[3].data(),
                  dnnl::algorithm::convolution_winograd);
    const auto timed = [&](auto&& f) {
      maybe_evict();
      const double t0 = now();
      f();
      return now() - t0;
    };
    std::vector<double> t[4];
    for (int i = 0; i < rounds + 3; ++i) {
      double d[4];
      for (int f = 0; f < 2; ++f)
        d[f] = timed([&] { run_winograd_nhwc(ours[f], x.data(), b.data(), y[f].data(), 1); });
      d[2] = timed([&] { direct.run(e); });
      d[3] = timed([&] { wino.run(e); });
      if (i >= 3)
        for (int k = 0; k < 4; ++k) t[k].push_back(d[k]);
    }
    double diff[2] = {0, 0};
    for (int f = 0; f < 2; ++f)
      for (size_t i = 0; i < y[2].size(); ++i)
        diff[f] = std::max(diff[f], double(std::fabs(y[f][i] - y[2][i])));
    double med[4];
    for (int k = 0; k < 4; ++k) med[k] = median(t[k]);
    std::printf("| %ld -> %ld | %ldx%ld | %.3f | %.3f | %.3f | %.3f | %.2fx | %.2fx | %.2fx | %.1e, %.1e |\n",
                long(C), long(C), long(H), long(H), med[0] * 1e3, med[1] * 1e3, med[2] * 1e3,
                med[3] * 1e3, med[0] / med[2], med[1] / med[2], med[3] / med[2], diff[0], diff[1]);
  }
}

// One attention layer of 12 heads over 128 tokens with random Q, K, V ([S, H*D]).
struct AttentionLayer {
  int64_t D, S = 128, H = 12, HD, R;  // R: query rows per block, as the kernel takes them
  float scale;
  std::vector<float> q, k, v;
  explicit AttentionLayer(int64_t d)
      : D(d), HD(H * d), R(attention_block_rows(S, S, best_vector_isa())), scale(1.0f / std::sqrt(float(d))),
        q(random_floats(static_cast<size_t>(S * HD), 7)), k(random_floats(q.size(), 8)),
        v(random_floats(q.size(), 9)) {}
};

// Seconds per head of each stage (pack, scores, softmax, probs V) summed over a layer.
struct StageTimes {
  double pack = 0, scores = 0, softmax = 0, probs_v = 0;
};

// Per-round times of two forms of the layer (A and B) and A's stages per head; prints the
// table row of medians with the largest difference between the two outputs.
struct AttentionRows {
  std::vector<double> a, b, pack, scores, softmax, probs_v;
  void add(double ta, double tb, const StageTimes& st, int64_t heads) {
    a.push_back(ta), b.push_back(tb);
    pack.push_back(st.pack / heads), scores.push_back(st.scores / heads),
        softmax.push_back(st.softmax / heads), probs_v.push_back(st.probs_v / heads);
  }
  void print(int64_t D, const std::vector<float>& ya, const std::vector<float>& yb) const {
    double diff = 0;
    for (size_t i = 0; i < ya.size(); ++i) diff = std::max(diff, double(std::fabs(ya[i] - yb[i])));
    std::printf("| %ld | %.3f | %.3f | %.2fx | %.1f / %.1f / %.1f / %.1f | %.1e |\n", long(D),
                median(a) * 1e3, median(b) * 1e3, median(a) / median(b), median(pack) * 1e6,
                median(scores) * 1e6, median(softmax) * 1e6, median(probs_v) * 1e6, diff);
  }
};

// The layer on the float32 tiles, as the Attention kernel runs it, into y; stage times into t.
void f32_layer(const AttentionLayer& L, VectorIsa isa, std::vector<float>& y, StageTimes* t) {
  static thread_local std::vector<float> kp, vp, sc, inv;
  kp.resize(static_cast<size_t>(panel_floats(L.D, L.S)));
  vp.resize(static_cast<size_t>(panel_floats(L.S, L.D)));
  sc.resize(static_cast<size_t>(L.R * L.S));
  inv.resize(static_cast<size_t>(L.R));
  for (int64_t h = 0; h < L.H; ++h) {
    const double a = now();
    pack_panels(L.k.data() + h * L.D, L.HD, true, L.D, L.S, L.scale, kp.data());
    pack_panels(L.v.data() + h * L.D, L.HD, false, L.S, L.D, 1.0f, vp.data());
    t->pack += now() - a;
    for (int64_t i0 = 0; i0 < L.S; i0 += L.R) {
      const int64_t R = std::min(L.R, L.S - i0);
      const double b = now();
      panel_product(isa, L.q.data() + h * L.D + i0 * L.HD, L.HD, R, L.D, kp.data(), L.S,
                    sc.data(), L.S);
      const double c = now();
      softmax_rows(isa, sc.data(), R, L.S, nullptr, 0, 0, inv.data());
      const double d = now();
      panel_product(isa, sc.data(), L.S, R, L.S, vp.data(), L.D, y.data() + h * L.D + i0 * L.HD,
                    L.HD, inv.data());
      t->scores += c - b, t->softmax += d - c, t->probs_v += now() - d;
    }
  }
}

// One attention layer of 12 heads over 128 tokens, as the Attention kernel runs it (per head:
// packing, then per block of query rows (attention_block_rows) the scores, softmax and probs V
// on the tiles)
// against the form it replaced: one strided batched oneDNN matmul for all heads' scores
// (scale as output scale), the softmax row kernel per head, a second batched matmul for
// probs V written into Y's layout.
// Rounds of `a` (which fills the stage times) then `b`, each from evicted caches when cold; the
// first 3 rounds warm up, the others go into rows (a's time first).
template <class A, class B>
void alternate(int rounds, int64_t heads, AttentionRows* rows, A a, B b) {
  for (int i = 0; i < rounds + 3; ++i) {
    maybe_evict();
    StageTimes st;
    const double t0 = now();
    a(&st);
    const double t1 = now();
    maybe_evict();
    const double t2 = now();
    b();
    const double t3 = now();
    if (i >= 3) rows->add(t1 - t0, t3 - t2, st, heads);
  }
}

void attention(Engine& e, int rounds) {
  std::printf("\n## attention: a layer of 12 heads x 128 tokens, tiles vs oneDNN batched matmul%s\n",
              g_cold ? ", cold caches" : "");
  std::printf("| head size | tiles ms | oneDNN ms | ratio | tiles: pack / scores / softmax / probs V us per head | max diff |\n");
  std::printf("| --- | --- | --- | --- | --- | --- |\n");
  const VectorIsa isa = best_vector_isa();
  const auto f32 = memory::data_type::f32;
  for (const int64_t D : {32, 64}) {
    AttentionLayer L(D);
    const int64_t S = L.S, H = L.H, HD = L.HD;
    std::vector<float> y1(L.q.size()), y2(L.q.size()), scores(static_cast<size_t>(H * S * S));
    // The replaced form's two primitives.
    const memory::desc q_md({1, H, S, D}, f32, {S * HD, D, HD, 1}),
        k_md({1, H, D, S}, f32, {S * HD, D, 1, HD}), s_md({1, H, S, S}, f32, {H * S * S, S * S, S, 1}),
        v_md({1, H, S, D}, f32, {S * HD, D, HD, 1}), y_md({1, H, S, D}, f32, {S * HD, D, HD, 1});
    dnnl::primitive_attr qk_attr;
    qk_attr.set_output_scales(0, {L.scale});
    dnnl::matmul qk(dnnl::matmul::primitive_desc(dnnl::matmul::desc(q_md, k_md, s_md), qk_attr, e.eng));
    dnnl::matmul pv(dnnl::matmul::primitive_desc(dnnl::matmul::desc(s_md, v_md, y_md), e.eng));
    std::unordered_map<int, memory> qk_args = {{DNNL_ARG_SRC, memory(q_md, e.eng, L.q.data())},
                                               {DNNL_ARG_WEIGHTS, memory(k_md, e.eng, L.k.data())},
                                               {DNNL_ARG_DST, memory(s_md, e.eng, scores.data())}};
    std::unordered_map<int, memory> pv_args = {{DNNL_ARG_SRC, memory(s_md, e.eng, scores.data())},
                                               {DNNL_ARG_WEIGHTS, memory(v_md, e.eng, L.v.data())},
                                               {DNNL_ARG_DST, memory(y_md, e.eng, y2.data())}};
    AttentionRows rows;
    alternate(
        rounds, H, &rows, [&](StageTimes* st) { f32_layer(L, isa, y1, st); },
        [&] {
          qk.execute(e.stream, qk_args);
          for (int64_t h = 0; h < H; ++h) softmax_rows(isa, scores.data() + h * S * S, S, S, nullptr, 0, 0);
          pv.execute(e.stream, pv_args);
          e.stream.wait();
        });
    rows.print(D, y1, y2);
  }
}

// The same layer on the float32 tiles and on the bf16 pair tiles (fast mode): time per layer,
// the bf16 form's time per stage, and the largest difference of Y (the bf16 form rounds Q, K, V
// and the probabilities).
void attention_bf16(int rounds) {
  if (!attention_bf16_available()) {
    std::printf("\n## attention_bf16: not run, the CPU has no avx512_bf16\n");
    return;
  }
  std::printf("\n## attention_bf16: a layer of 12 heads x 128 tokens, bf16 pair tiles vs float32 tiles%s\n",
              g_cold ? ", cold caches" : "");
  std::printf("| head size | bf16 ms | f32 ms | ratio | bf16: pack / scores / softmax / probs V us per head | max diff |\n");
  std::printf("| --- | --- | --- | --- | --- | --- |\n");
  const VectorIsa isa = best_vector_isa();
  for (const int64_t D : {32, 64}) {
    AttentionLayer L(D);
    const int64_t S = L.S, H = L.H, HD = L.HD, R = L.R, ldq = (D + 1) / 2, lde = (S + 1) / 2;
    std::vector<float> y1(L.q.size()), y2(L.q.size()), sc(static_cast<size_t>(R * S)), inv(R);
    std::vector<uint32_t> kw(static_cast<size_t>(pair_panel_words(D, S))),
        vw(static_cast<size_t>(pair_panel_words(S, D))), qw(static_cast<size_t>(R * ldq)),
        ew(static_cast<size_t>(R * lde));
    AttentionRows rows;
    const auto bf16_layer = [&](StageTimes* st) {
      for (int64_t h = 0; h < H; ++h) {
        const double a = now();
        pack_pairs_bf16(L.k.data() + h * D, HD, true, D, S, L.scale, kw.data());
        pack_pairs_bf16(L.v.data() + h * D, HD, false, S, D, 1.0f, vw.data());
        st->pack += now() - a;
        for (int64_t i0 = 0; i0 < S; i0 += R) {
          const int64_t rows = std::min(R, S - i0);
          const double b = now();
          rows_to_pairs_bf16(L.q.data() + h * D + i0 * HD, HD, rows, D, qw.data(), ldq);
          panel_product_bf16(qw.data(), ldq, rows, D, kw.data(), S, sc.data(), S);
          const double c = now();
          softmax_rows(isa, sc.data(), rows, S, nullptr, 0, 0, inv.data());
          const double d = now();
          rows_to_pairs_bf16(sc.data(), S, rows, S, ew.data(), lde);
          panel_product_bf16(ew.data(), lde, rows, S, vw.data(), D, y2.data() + h * D + i0 * HD, HD,
                             inv.data());
          st->scores += c - b, st->softmax += d - c, st->probs_v += now() - d;
        }
      }
    };
    alternate(rounds, H, &rows, bf16_layer, [&] {
      StageTimes unused;
      f32_layer(L, isa, y1, &unused);
    });
    rows.print(D, y2, y1);
  }
}

}  // namespace

// One product shape over `layers` copies of a constant B, run in the form the state decides.
struct ProductForm {
  std::vector<osprey::Tensor> weights;
  std::vector<std::shared_ptr<MatMulState>> states;
};

void products(int rounds, int64_t kRows, int threads) {
  constexpr int kLayers = 12;
  std::printf("\n## products: float32, %lld rows + bias, %d copies of B in turn, %d thread(s); "
              "matmul_core's form vs oneDNN matmul\n\n",
              static_cast<long long>(kRows), kLayers, threads);
  std::printf("| K -> N | chosen form | chosen ms | matmul ms | ratio | GFLOP/s chosen | max diff |\n"
              "| --- | --- | --- | --- | --- | --- | --- |\n");
  const std::pair<int64_t, int64_t> shapes[] = {{768, 2304}, {768, 768},  {768, 3072},
                                                {3072, 768}, {384, 1152}, {384, 1536},
                                                {1024, 256}, {576, 160},  {256, 64},
                                                {2048, 512}, {4608, 512},
                                                // inverted residuals' short-K pointwise products
                                                {16, 96},    {32, 16},    {144, 24}};
  for (const auto& [K, N] : shapes) {
    osprey::cpu::Product2D p;
    p.M = kRows, p.K = K, p.N = N, p.has_bias = true;
    const auto a = random_floats(static_cast<size_t>(kRows * K), 1);
    const auto bias = random_floats(static_cast<size_t>(N), 2);
    // [0]: the state decides, [1]: held to oneDNN's matmul.
    ProductForm forms[2];
    for (int f = 0; f < 2; ++f)
      for (int l = 0; l < kLayers; ++l) {
        osprey::Tensor w(osprey::DType::kFloat32, {K, N});
        const auto v = random_floats(static_cast<size_t>(K * N), 10 + l);
        std::copy(v.begin(), v.end(), w.data<float>());
        auto st = std::make_shared<MatMulState>();
        st->weights = w;
        st->weights_data = w.raw_data();
        if (f == 1) st->packed_as_conv = 0, st->allow_panel = false;
        if (!prepack_weights(*st, false, 1).ok()) {
          std::printf("| %lld -> %lld | prepack failed | | | | | |\n", static_cast<long long>(K),
                      static_cast<long long>(N));
          return;
        }
        forms[f].weights.push_back(w);
        forms[f].states.push_back(st);
      }
    std::vector<float> y[2] = {std::vector<float>(static_cast<size_t>(kRows * N)),
                               std::vector<float>(static_cast<size_t>(kRows * N))};
    auto run_form = [&](int f) {
      maybe_evict();
      const double t0 = now();
      for (int l = 0; l < kLayers; ++l) {
        const auto& w = forms[f].weights[static_cast<size_t>(l)];
        (void)run_product(*forms[f].states[static_cast<size_t>(l)], p, threads, w, a.data(),
                          w.data<float>(), bias.data(), y[f].data());
      }
      return (now() - t0) / kLayers;
    };
    std::vector<double> ta, tb, ratio;
    for (int r = 0; r < rounds + 3; ++r) {  // A B, B A, ...: the order's own effect cancels
      double x, z;
      if (r % 2 == 0) {
        x = run_form(0), z = run_form(1);
      } else {
        z = run_form(1), x = run_form(0);
      }
      if (r < 3) continue;
      ta.push_back(x), tb.push_back(z), ratio.push_back(x / z);
    }
    float diff = 0;
    for (size_t i = 0; i < y[0].size(); ++i) diff = std::max(diff, std::fabs(y[0][i] - y[1][i]));
    const double flops = 2.0 * static_cast<double>(kRows * K * N);
    std::printf("| %lld -> %lld | %s | %.3f | %.3f | %.3f | %.1f | %.2g |\n",
                static_cast<long long>(K), static_cast<long long>(N),
                forms[0].states[0]->panel.data         ? "panel_product"
                : forms[0].states[0]->packed_as_conv == 1 ? "1x1 convolution"
                                                          : "matmul",
                median(ta) * 1e3, median(tb) * 1e3, median(ratio), flops / median(ta) * 1e-9,
                static_cast<double>(diff));
  }
}

int main(int argc, char** argv) {
  int rounds = 25;
  std::string only;  // one section, or all
  int rows = 128;     // the products' rows (A's, Y's)
  int threads = 1;    // the products' threads (OMP_NUM_THREADS the same for oneDNN's)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cold") {
      g_cold = true;
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--threads" && i + 1 < argc) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--rows" && i + 1 < argc) {
      rows = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: osprey_tile_bench [--cold] [--rounds N] [--rows M] [--threads T] [--only conv3x3|"
                   "conv1x1|winograd|attention|attention_bf16|products]\n");
      return 2;
    }
  }
  const char* sections[] = {"conv3x3", "conv1x1", "winograd", "attention", "attention_bf16", "products"};
  if (!only.empty() && std::find(std::begin(sections), std::end(sections), only) == std::end(sections)) {
    std::fprintf(stderr, "osprey_tile_bench: unknown section '%s'\n", only.c_str());
    return 2;
  }
  auto want = [&](const char* name) { return only.empty() || only == name; };
  std::printf("# osprey_tile_bench: vector ISA %s, %d rounds, medians\n",
              vector_isa_name(best_vector_isa()), rounds);
  Engine e;
  if (want("conv3x3")) conv3x3(e, rounds);
  if (want("conv1x1")) conv1x1(e, rounds);
  if (want("winograd")) winograd(e, rounds);
  if (want("attention")) attention(e, rounds);
  if (want("attention_bf16")) attention_bf16(rounds);
  if (want("products")) products(rounds, rows, threads);
  return 0;
}
