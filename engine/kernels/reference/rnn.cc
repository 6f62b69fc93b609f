// Recurrent layers: RNN, GRU (linear_before_reset), LSTM (peepholes, input_forget), with
// directions forward / reverse / bidirectional, sequence_lens, initial states, clip,
// activations (+ alpha/beta) and the opset-14 batch-major layout.
// Work is done in a canonical time-major layout in C = double for double inputs, else float;
// the input projection of all time steps is one GEMM, the recurrence one GEMM per step.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/gemm_core.h"

namespace osprey::ref {
namespace {

enum class Cell { kRnn, kGru, kLstm };

enum class ActKind {
  kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid,
  kElu, kSoftsign, kSoftplus
};

struct Activation {
  ActKind kind = ActKind::kTanh;
  float alpha = 0, beta = 0;
};

// Applies `a` to v[0..n) in place (the switch is outside the element loop).
template <class C>
void apply(const Activation& a, C* v, int64_t n) {
  const C al = static_cast<C>(a.alpha), be = static_cast<C>(a.beta);
  switch (a.kind) {
    case ActKind::kRelu: for (int64_t i = 0; i < n; ++i) v[i] = v[i] > C(0) ? v[i] : C(0); break;
    case ActKind::kTanh: for (int64_t i = 0; i < n; ++i) v[i] = std::tanh(v[i]); break;
    case ActKind::kSigmoid:
      for (int64_t i = 0; i < n; ++i)
        v[i] = v[i] >= C(0) ? C(1) / (C(1) + std::exp(-v[i])) : std::exp(v[i]) / (C(1) + std::exp(v[i]));
      break;
    case ActKind::kAffine: for (int64_t i = 0; i < n; ++i) v[i] = al * v[i] + be; break;
    case ActKind::kLeakyRelu: for (int64_t i = 0; i < n; ++i) v[i] = v[i] >= C(0) ? v[i] : al * v[i]; break;
    case ActKind::kThresholdedRelu: for (int64_t i = 0; i < n; ++i) v[i] = v[i] > al ? v[i] : C(0); break;
    case ActKind::kScaledTanh: for (int64_t i = 0; i < n; ++i) v[i] = al * std::tanh(be * v[i]); break;
    case ActKind::kHardSigmoid:
      for (int64_t i = 0; i < n; ++i) v[i] = std::clamp(al * v[i] + be, C(0), C(1));
      break;
    case ActKind::kElu:
      for (int64_t i = 0; i < n; ++i) v[i] = v[i] >= C(0) ? v[i] : al * (std::exp(v[i]) - C(1));
      break;
    case ActKind::kSoftsign: for (int64_t i = 0; i < n; ++i) v[i] = v[i] / (C(1) + std::fabs(v[i])); break;
    case ActKind::kSoftplus:
      for (int64_t i = 0; i < n; ++i)
        v[i] = v[i] > C(0) ? v[i] + std::log1p(std::exp(-v[i])) : std::log1p(std::exp(v[i]));
      break;
  }
}

// Parses `activations` / `activation_alpha` / `activation_beta`: `per` functions per direction.
// Alphas and betas are consumed in order by the functions that take them; missing ones
// take the defaults of the corresponding ONNX operators.
Status parse_activations(const KernelContext& ctx, int64_t per, int64_t dirs,
                         const std::vector<std::string>& defaults, std::vector<Activation>* out) {
  std::vector<std::string> names = ctx.attr_strings("activations");
  if (names.empty())
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  if (static_cast<int64_t>(names.size()) == per && dirs == 2)
    names.insert(names.end(), names.begin(), names.end());  // same functions both ways
  if (static_cast<int64_t>(names.size()) != per * dirs)
    return invalid_argument("attribute activations has ", names.size(), " functions, expected ",
                            per * dirs);
  const std::vector<float> alphas = ctx.attr_floats("activation_alpha");
  const std::vector<float> betas = ctx.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  out->clear();
  for (std::string n : names) {
    for (auto& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    Activation a;
    float def_alpha = 0, def_beta = 0;
    bool takes_alpha = false, takes_beta = false;
    if (n == "relu") a.kind = ActKind::kRelu;
    else if (n == "tanh") a.kind = ActKind::kTanh;
    else if (n == "sigmoid") a.kind = ActKind::kSigmoid;
    else if (n == "affine") a.kind = ActKind::kAffine, def_alpha = 1, takes_alpha = takes_beta = true;
    else if (n == "leakyrelu") a.kind = ActKind::kLeakyRelu, def_alpha = 0.01f, takes_alpha = true;
    else if (n == "thresholdedrelu") a.kind = ActKind::kThresholdedRelu, def_alpha = 1, takes_alpha = true;
    else if (n == "scaledtanh") a.kind = ActKind::kScaledTanh, def_alpha = def_beta = 1, takes_alpha = takes_beta = true;
    else if (n == "hardsigmoid") a.kind = ActKind::kHardSigmoid, def_alpha = 0.2f, def_beta = 0.5f, takes_alpha = takes_beta = true;
    else if (n == "elu") a.kind = ActKind::kElu, def_alpha = 1, takes_alpha = true;
    else if (n == "softsign") a.kind = ActKind::kSoftsign;
    else if (n == "softplus") a.kind = ActKind::kSoftplus;
    else return invalid_argument("unsupported activation function '", n, "'");
    a.alpha = takes_alpha && ai < alphas.size() ? alphas[ai++] : def_alpha;
    a.beta = takes_beta && bi < betas.size() ? betas[bi++] : def_beta;
    out->push_back(a);
  }
  return Status::Ok();
}

template <class C>
struct Problem {
  Cell cell = Cell::kRnn;
  int64_t seq = 0, batch = 0, in = 0, H = 0, dirs = 1, G = 1, per = 1;
  bool lbr = false, input_forget = false, reverse_only = false;
  C clip = 0;  // <= 0: none
  std::vector<C> X;            // [seq, batch, in]
  // The weights as given ([dirs, ...]): the tensors' own data when their type is C, else the
  // converted copies in *_own. B and P may be null.
  const C *W = nullptr, *R = nullptr, *B = nullptr, *P = nullptr;
  std::vector<C> W_own, R_own, B_own, P_own;
  std::vector<C> h0, c0;       // [dirs, batch, H]; may be empty
  std::vector<int64_t> lens;   // [batch]
  std::vector<Activation> acts;
  std::vector<C> Y, Yh, Yc;    // [seq, dirs, batch, H], [dirs, batch, H] x 2
};

template <class C>
void clip_values(C* v, int64_t n, C clip) {
  if (clip > C(0))
    for (int64_t i = 0; i < n; ++i) v[i] = std::clamp(v[i], -clip, clip);
}

template <class C>
void run_direction(Problem<C>& p, int64_t d, bool reverse) {
  const int64_t H = p.H, GH = p.G * H, Bt = p.batch, S = p.seq, I = p.in;
  const C* W = p.W + d * GH * I;
  const C* R = p.R + d * GH * H;
  const C* Wb = p.B ? p.B + d * 2 * GH : nullptr;
  const C* Rb = Wb ? Wb + GH : nullptr;
  const C* P = p.P ? p.P + d * 3 * H : nullptr;
  const Activation* act = p.acts.data() + d * p.per;

  // Input projections of every step, with the biases that simply add.
  std::vector<C> xw(static_cast<size_t>(S * Bt * GH));
  gemm<C>(false, true, S * Bt, GH, I, C(1), p.X.data(), I, W, I, C(0), xw.data(), GH);
  if (Wb)
    for (int64_t r = 0; r < S * Bt; ++r)
      for (int64_t j = 0; j < GH; ++j)
        xw[r * GH + j] += Wb[j] + (p.cell == Cell::kGru && j >= 2 * H ? C(0) : Rb[j]);

  std::vector<C> h(static_cast<size_t>(Bt * H), C(0)), c(h.size(), C(0));
  if (!p.h0.empty()) std::copy_n(p.h0.begin() + d * Bt * H, Bt * H, h.begin());
  if (!p.c0.empty()) std::copy_n(p.c0.begin() + d * Bt * H, Bt * H, c.begin());
  std::vector<C> hr(static_cast<size_t>(Bt * GH)), g(static_cast<size_t>(GH));
  std::vector<C> rh(static_cast<size_t>(Bt * H)), hrh(rh.size()), z(rh.size());

  for (int64_t s = 0; s < S; ++s) {
    const bool gru_split = p.cell == Cell::kGru && !p.lbr;
    gemm<C>(false, true, Bt, gru_split ? 2 * H : GH, H, C(1), h.data(), H, R, H, C(0), hr.data(),
            GH);
    for (int phase = 0; phase < (gru_split ? 2 : 1); ++phase) {
      if (phase == 1)  // GRU without linear_before_reset: (r . h) x Rh^T
        gemm<C>(false, true, Bt, H, H, C(1), rh.data(), H, R + 2 * H * H, H, C(0), hrh.data(), H);
      for (int64_t b = 0; b < Bt; ++b) {
        if (s >= p.lens[static_cast<size_t>(b)]) continue;
        const int64_t t = reverse ? p.lens[static_cast<size_t>(b)] - 1 - s : s;
        const C* x = xw.data() + (t * Bt + b) * GH;
        const C* hrb = hr.data() + b * GH;
        C* hb = h.data() + b * H;
        C* cb = c.data() + b * H;
        if (p.cell == Cell::kRnn) {
          for (int64_t j = 0; j < H; ++j) g[j] = x[j] + hrb[j];
          clip_values(g.data(), H, p.clip);
          apply(act[0], g.data(), H);
          std::copy_n(g.data(), H, hb);
        } else if (p.cell == Cell::kLstm) {  // gates i, o, f, c
          C *gi = g.data(), *go = gi + H, *gf = go + H, *gc = gf + H;
          for (int64_t j = 0; j < GH; ++j) g[j] = x[j] + hrb[j];
          if (P)
            for (int64_t j = 0; j < H; ++j) {
              gi[j] += P[j] * cb[j];
              gf[j] += P[2 * H + j] * cb[j];
            }
          clip_values(gi, H, p.clip);
          clip_values(gf, H, p.clip);
          clip_values(gc, H, p.clip);
          apply(act[0], gi, H);
          if (p.input_forget) {
            for (int64_t j = 0; j < H; ++j) gf[j] = C(1) - gi[j];
          } else {
            apply(act[0], gf, H);
          }
          apply(act[1], gc, H);
          for (int64_t j = 0; j < H; ++j) cb[j] = gf[j] * cb[j] + gi[j] * gc[j];
          if (P)
            for (int64_t j = 0; j < H; ++j) go[j] += P[H + j] * cb[j];
          clip_values(go, H, p.clip);
          apply(act[0], go, H);
          std::copy_n(cb, H, gc);
          apply(act[2], gc, H);
          for (int64_t j = 0; j < H; ++j) hb[j] = go[j] * gc[j];
        } else if (phase == 0) {  // GRU gates z, r, h
          C *gz = g.data(), *gr = gz + H, *gh = gr + H;
          for (int64_t j = 0; j < 2 * H; ++j) g[j] = x[j] + hrb[j];
          clip_values(g.data(), 2 * H, p.clip);
          apply(act[0], g.data(), 2 * H);
          if (gru_split) {
            for (int64_t j = 0; j < H; ++j) {
              z[b * H + j] = gz[j];
              rh[b * H + j] = gr[j] * hb[j];
            }
            continue;  // h gate after the second GEMM
          }
          for (int64_t j = 0; j < H; ++j)
            gh[j] = x[2 * H + j] + gr[j] * (hrb[2 * H + j] + (Rb ? Rb[2 * H + j] : C(0)));
          clip_values(gh, H, p.clip);
          apply(act[1], gh, H);
          for (int64_t j = 0; j < H; ++j) hb[j] = (C(1) - gz[j]) * gh[j] + gz[j] * hb[j];
        } else {
          C* gh = g.data() + 2 * H;
          for (int64_t j = 0; j < H; ++j)
            gh[j] = x[2 * H + j] + hrh[b * H + j] + (Rb ? Rb[2 * H + j] : C(0));
          clip_values(gh, H, p.clip);
          apply(act[1], gh, H);
          const C* zb = z.data() + b * H;
          for (int64_t j = 0; j < H; ++j) hb[j] = (C(1) - zb[j]) * gh[j] + zb[j] * hb[j];
        }
        if (p.cell != Cell::kGru || phase == (gru_split ? 1 : 0))
          std::copy_n(hb, H, p.Y.begin() + ((t * p.dirs + d) * Bt + b) * H);
      }
    }
  }
  std::copy(h.begin(), h.end(), p.Yh.begin() + d * Bt * H);
  std::copy(c.begin(), c.end(), p.Yc.begin() + d * Bt * H);
}

// Copies tensor `t` (any float type) into a vector of C, optionally swapping its first two dims
// (batch-major layout -> time-major / direction-major).
template <class C, class T>
std::vector<C> to_vec(const Tensor& t, bool swap01) {
  std::vector<C> v(static_cast<size_t>(t.numel()));
  const T* src = t.data<T>();
  if (!swap01 || t.rank() < 2) {
    for (int64_t i = 0; i < t.numel(); ++i) v[i] = static_cast<C>(static_cast<compute_t<T>>(src[i]));
    return v;
  }
  const int64_t a = t.dim(0), b = t.dim(1), inner = t.numel() / std::max<int64_t>(a * b, 1);
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < inner; ++k)
        v[(j * a + i) * inner + k] = static_cast<C>(static_cast<compute_t<T>>(src[(i * b + j) * inner + k]));
  return v;
}

// Tensor t's elements as C: its own data when it holds C already (the weights of a float
// model, read in place on every run), else a converted copy kept in *own.
template <class C, class T>
const C* view_as(const Tensor& t, std::vector<C>* own) {
  if constexpr (std::is_same_v<C, T>) {
    return t.data<T>();
  } else {
    *own = to_vec<C, T>(t, false);
    return own->data();
  }
}

// Writes canonical v ([a, b, inner]) to output i as T, swapping dims 0 and 1 if asked.
template <class C, class T>
Status write_output(KernelContext& ctx, int i, const std::vector<C>& v, Shape canonical,
                    bool swap01) {
  if (!ctx.output_requested(i)) return Status::Ok();
  Shape shape = canonical;
  if (swap01) std::swap(shape[0], shape[1]);
  OSPREY_ASSIGN_OR_RETURN(Tensor out, ctx.new_output(i, dtype_v<T>, shape));
  T* dst = out.data<T>();
  const int64_t a = canonical[0], b = canonical[1];
  const int64_t inner = a * b > 0 ? out.numel() / (a * b) : 0;
  for (int64_t x = 0; x < a; ++x)
    for (int64_t y = 0; y < b; ++y) {
      const int64_t o = swap01 ? (y * a + x) * inner : (x * b + y) * inner;
      for (int64_t k = 0; k < inner; ++k) dst[o + k] = cast_to<T>(v[(x * b + y) * inner + k]);
    }
  return Status::Ok();
}

Status check_shape(const KernelContext& ctx, int i, const Shape& want, const char* what) {
  if (!ctx.has_input(i)) return Status::Ok();
  const Tensor& t = ctx.input(i);
  if (t.shape() != want)
    return invalid_argument(what, " has shape ", shape_to_string(t.shape()), ", expected ",
                            shape_to_string(want));
  if (t.dtype() != ctx.input(0).dtype())
    return invalid_argument(what, " has type ", dtype_name(t.dtype()), ", expected ",
                            dtype_name(ctx.input(0).dtype()));
  return Status::Ok();
}

template <class T>
Status run_rnn(KernelContext& ctx, Cell cell) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  Problem<C> p;
  p.cell = cell;
  p.G = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
  p.per = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3;
  for (int i = 0; i < 3; ++i) OSPREY_RETURN_IF_ERROR(require_rank(ctx, i, 3, 3));
  const Tensor& X = ctx.input(0);
  const Tensor& W = ctx.input(1);
  const Tensor& R = ctx.input(2);
  const int64_t layout = ctx.attr_int("layout", 0);
  if (layout != 0 && layout != 1) return invalid_argument("attribute layout must be 0 or 1");
  const bool bm = layout == 1;
  const std::string dir = ctx.attr_string("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return invalid_argument("attribute direction has invalid value '", dir, "'");
  p.dirs = dir == "bidirectional" ? 2 : 1;
  p.reverse_only = dir == "reverse";
  p.seq = bm ? X.dim(1) : X.dim(0);
  p.batch = bm ? X.dim(0) : X.dim(1);
  p.in = X.dim(2);
  p.H = ctx.attr_int("hidden_size", R.dim(2));
  const int64_t H = p.H, GH = p.G * H;
  if (H <= 0 || H > (int64_t{1} << 24)) return invalid_argument("invalid hidden_size ", H);
  OSPREY_RETURN_IF_ERROR(check_shape(ctx, 1, {p.dirs, GH, p.in}, "input W"));
  OSPREY_RETURN_IF_ERROR(check_shape(ctx, 2, {p.dirs, GH, H}, "input R"));
  OSPREY_RETURN_IF_ERROR(check_shape(ctx, 3, {p.dirs, 2 * GH}, "input B"));
  const Shape state = bm ? Shape{p.batch, p.dirs, H} : Shape{p.dirs, p.batch, H};
  OSPREY_RETURN_IF_ERROR(check_shape(ctx, 5, state, "initial_h"));
  if (cell == Cell::kLstm) {
    OSPREY_RETURN_IF_ERROR(check_shape(ctx, 6, state, "initial_c"));
    OSPREY_RETURN_IF_ERROR(check_shape(ctx, 7, {p.dirs, 3 * H}, "input P"));
  }
  // Buffers: inputs, outputs and the projections of every step must fit the element limit.
  const int64_t limit = ctx.max_elements();
  const double need = static_cast<double>(p.seq) * static_cast<double>(p.batch) *
                      static_cast<double>(std::max(GH, p.dirs * H));
  if (limit > 0 && need > static_cast<double>(limit))
    return resource_exhausted("recurrence needs ", need, " elements, over the limit ", limit);
  p.lens.assign(static_cast<size_t>(p.batch), p.seq);
  if (ctx.has_input(4)) {
    const Tensor& sl = ctx.input(4);
    if (sl.dtype() != DType::kInt32 || sl.shape() != Shape{p.batch})
      return invalid_argument("sequence_lens must be int32 [", p.batch, "], got ", sl.debug_string());
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t v = sl.data<int32_t>()[b];
      if (v < 0 || v > p.seq)
        return invalid_argument("sequence_lens[", b, "] = ", v, " is outside [0, ", p.seq, "]");
      p.lens[static_cast<size_t>(b)] = v;
    }
  }
  const float clip = ctx.attr_float("clip", 0.0f);
  if (ctx.has_attr("clip") && !(clip > 0)) return invalid_argument("attribute clip must be > 0");
  p.clip = static_cast<C>(clip);
  p.lbr = ctx.attr_int("linear_before_reset", 0) != 0;
  p.input_forget = ctx.attr_int("input_forget", 0) != 0;
  const std::vector<std::string> defaults =
      cell == Cell::kRnn   ? std::vector<std::string>{"Tanh"}
      : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                           : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  OSPREY_RETURN_IF_ERROR(parse_activations(ctx, p.per, p.dirs, defaults, &p.acts));

  p.X = to_vec<C, T>(X, bm);
  p.W = view_as<C, T>(W, &p.W_own);
  p.R = view_as<C, T>(R, &p.R_own);
  if (ctx.has_input(3)) p.B = view_as<C, T>(ctx.input(3), &p.B_own);
  if (ctx.has_input(5)) p.h0 = to_vec<C, T>(ctx.input(5), bm);
  if (cell == Cell::kLstm && ctx.has_input(6)) p.c0 = to_vec<C, T>(ctx.input(6), bm);
  if (cell == Cell::kLstm && ctx.has_input(7)) p.P = view_as<C, T>(ctx.input(7), &p.P_own);
  p.Y.assign(static_cast<size_t>(p.seq * p.dirs * p.batch * H), C(0));
  p.Yh.assign(static_cast<size_t>(p.dirs * p.batch * H), C(0));
  p.Yc.assign(p.Yh.size(), C(0));
  for (int64_t d = 0; d < p.dirs; ++d) run_direction(p, d, p.reverse_only || d == 1);

  if (bm) {  // Y: [seq, dirs, batch, H] -> [batch, seq, dirs, H]
    if (ctx.output_requested(0)) {
      OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, dtype_v<T>, {p.batch, p.seq, p.dirs, H}));
      T* dst = y.data<T>();
      for (int64_t t = 0; t < p.seq; ++t)
        for (int64_t d = 0; d < p.dirs; ++d)
          for (int64_t b = 0; b < p.batch; ++b)
            for (int64_t j = 0; j < H; ++j)
              dst[((b * p.seq + t) * p.dirs + d) * H + j] =
                  cast_to<T>(p.Y[((t * p.dirs + d) * p.batch + b) * H + j]);
    }
  } else {
    OSPREY_RETURN_IF_ERROR((write_output<C, T>(ctx, 0, p.Y, Shape{p.seq, p.dirs, p.batch, H}, false)));
  }
  OSPREY_RETURN_IF_ERROR((write_output<C, T>(ctx, 1, p.Yh, Shape{p.dirs, p.batch, H}, bm)));
  if (cell == Cell::kLstm)
    OSPREY_RETURN_IF_ERROR((write_output<C, T>(ctx, 2, p.Yc, Shape{p.dirs, p.batch, H}, bm)));
  return Status::Ok();
}

Status run_cell(KernelContext& ctx, Cell cell, const char* what) {
  return dispatch<FloatTypes>(ctx.input(0).dtype(), what,
                              [&]<class T>() { return run_rnn<T>(ctx, cell); });
}

}  // namespace

Status rnn(KernelContext& ctx) { return run_cell(ctx, Cell::kRnn, "RNN"); }
Status gru(KernelContext& ctx) { return run_cell(ctx, Cell::kGru, "GRU"); }
Status lstm(KernelContext& ctx) { return run_cell(ctx, Cell::kLstm, "LSTM"); }

}  // namespace osprey::ref
