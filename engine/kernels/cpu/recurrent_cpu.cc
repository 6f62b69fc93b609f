// LSTM, GRU and RNN in float32 with constant weights, on AVX-512: W and R packed once at load
// for panel_product (W^T and R^T, per direction), the input projection of every step one
// product over all steps (with the biases that add), the recurrence one product per step (the
// batch's hidden rows times R^T), the gates in the vectorized cells of row_kernels.h. A
// bidirectional layer runs its two directions on two threads. A one-direction layer gives its
// projection every thread, and splits its hidden units into slices, one per thread: each
// thread multiplies h by its slice of R^T (which then stays in its core's L2) and runs those
// units' gates, with a barrier after each step (two for a GRU without linear_before_reset).
//
// Why: the reference (a plain GEMM, std::exp and std::tanh per element) ran a 100-step LSTM
// with 256 inputs and hidden units at 3.9x onnxruntime's time (6.7 against 1.7 ms, one
// thread); Silero VAD's decoder LSTM took a fifth of that model's time.
//
// The reference kernel (the tests' oracle) runs what this form does not cover: non-default
// activations, input_forget, peepholes, sequence_lens shorter than the sequence, weights that
// are not constants, double, a CPU without AVX-512. The state's form() says which ran.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <omp.h>

#include "kernels/cpu/panel_product.h"
#include "kernels/cpu/row_kernels.h"
#include "kernels/kernel.h"
#include "threading/thread_pool.h"

namespace osprey {
namespace ref {
Status lstm(KernelContext& ctx);
Status gru(KernelContext& ctx);
Status rnn(KernelContext& ctx);
}  // namespace ref

namespace cpu {
namespace {

enum class Cell { kRnn, kGru, kLstm };

int64_t gate_count(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 3 : 4; }

// Hidden units [j0, j1) of the recurrence: R^T's columns of their gates, gate by gate
// ([H, Gr w], w = j1 - j0, Gr the gates in the product). A GRU without linear_before_reset:
// r holds its z and r gates, and r_h R_h^T's columns of these units [H, w].
struct Slice {
  int64_t j0 = 0, j1 = 0;
  PanelB r, r_h;
};

struct Direction {
  PanelB w;  // W^T [I, G H]
  // The recurrence's R^T, in slices of hidden units that threads run side by side (one slice
  // unless the session's threads split a one-direction layer).
  std::vector<Slice> r;
  // Added to the input projection: Wb + Rb, except R's h-gate bias under linear_before_reset,
  // which is rb_h. Empty without B.
  std::vector<float> bias, rb_h;
};

struct RecurrentState final : KernelState {
  Cell cell = Cell::kLstm;
  std::string why_not;  // empty: the packed form runs the node
  int64_t dirs = 1, H = 0, I = 0;
  bool reverse_only = false, batch_major = false, lbr = false, has_bias = false;
  float clip = std::numeric_limits<float>::infinity();
  std::vector<Direction> dir;

  std::string form() const override {
    if (!why_not.empty()) return "reference (" + why_not + ")";
    const size_t slices = dir.empty() ? 1 : dir[0].r.size();
    return slices > 1 ? "recurrent cells (panel_product, " + std::to_string(slices) + " slices of hidden units)"
                      : "recurrent cells (panel_product)";
  }
};

bool is_float_constant(const KernelContext& ctx, int i, int rank) {
  return ctx.has_input(i) && ctx.input_value(i).is_tensor() && ctx.input(i).dtype() == DType::kFloat32 &&
         ctx.input(i).rank() == rank;
}

// Why the packed form cannot run this node ("" when it can), from its attributes and
// constants.
std::string unsupported(const KernelContext& ctx, Cell cell) {
  if (!panel_product_supported()) return "no AVX-512";
  const std::vector<std::string> defaults =
      cell == Cell::kRnn   ? std::vector<std::string>{"tanh"}
      : cell == Cell::kGru ? std::vector<std::string>{"sigmoid", "tanh"}
                           : std::vector<std::string>{"sigmoid", "tanh", "tanh"};
  std::vector<std::string> acts = ctx.attr_strings("activations");
  for (auto& a : acts)
    for (auto& ch : a) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (size_t k = 0; k < acts.size(); ++k)
    if (acts[k] != defaults[k % defaults.size()]) return "activation " + acts[k];
  if (ctx.attr_int("input_forget", 0) != 0) return "input_forget";
  if (ctx.has_attr("clip") && !(ctx.attr_float("clip", 0.0f) > 0)) return "clip";
  const int64_t layout = ctx.attr_int("layout", 0);
  if (layout != 0 && layout != 1) return "layout";
  const std::string d = ctx.attr_string("direction", "forward");
  if (d != "forward" && d != "reverse" && d != "bidirectional") return "direction";
  if (!is_float_constant(ctx, 1, 3) || !is_float_constant(ctx, 2, 3)) return "weights not constant";
  if (ctx.has_input(3) && !is_float_constant(ctx, 3, 2)) return "bias not constant";
  if (cell == Cell::kLstm && ctx.has_input(7)) return "peepholes";
  const Tensor& W = ctx.input(1);
  const Tensor& R = ctx.input(2);
  const int64_t dirs = d == "bidirectional" ? 2 : 1, H = ctx.attr_int("hidden_size", R.dim(2));
  const int64_t GH = gate_count(cell) * H;
  if (H <= 0 || W.dim(0) != dirs || W.dim(1) != GH || R.shape() != Shape{dirs, GH, H} ||
      (ctx.has_input(3) && ctx.input(3).shape() != Shape{dirs, 2 * GH}))
    return "weight shapes";
  return {};
}

Result<std::shared_ptr<KernelState>> prepare(const KernelContext& ctx, Cell cell) {
  auto st = std::make_shared<RecurrentState>();
  st->cell = cell;
  st->why_not = unsupported(ctx, cell);
  if (!st->why_not.empty()) return std::shared_ptr<KernelState>(st);
  const Tensor& W = ctx.input(1);
  const Tensor& R = ctx.input(2);
  st->dirs = W.dim(0);
  st->I = W.dim(2);
  st->H = R.dim(2);
  st->reverse_only = ctx.attr_string("direction", "forward") == "reverse";
  st->batch_major = ctx.attr_int("layout", 0) == 1;
  st->lbr = cell == Cell::kGru && ctx.attr_int("linear_before_reset", 0) != 0;
  if (ctx.has_attr("clip")) st->clip = ctx.attr_float("clip", 0.0f);
  st->has_bias = ctx.has_input(3);
  const int64_t H = st->H, I = st->I, GH = gate_count(cell) * H;
  const bool split_h = cell == Cell::kGru && !st->lbr;
  const int64_t gr = split_h ? 2 : gate_count(cell);  // gates in the recurrence's product
  // A one-direction layer splits its hidden units across the session's threads, in slices of
  // at least 32 units that start on a 16-unit vector (a bidirectional one runs a direction per
  // thread).
  const int threads = ctx.pool() ? ctx.pool()->num_threads() : 1;
  const int64_t slices = st->dirs == 1 ? std::clamp<int64_t>(std::min<int64_t>(threads, H / 32), 1, 64) : 1;
  for (int64_t d = 0; d < st->dirs; ++d) {
    Direction dir;
    const float* w = W.data<float>() + d * GH * I;
    const float* r = R.data<float>() + d * GH * H;
    dir.w = pack_panel_b(w, I, GH, 1, I);
    for (int64_t k = 0; k < slices; ++k) {
      Slice q;
      q.j0 = k == 0 ? 0 : (k * H / slices) / 16 * 16;
      q.j1 = k + 1 == slices ? H : ((k + 1) * H / slices) / 16 * 16;
      const int64_t width = q.j1 - q.j0;
      q.r = make_panel_b(H, gr * width);
      fill_panel_b(q.r, [&](int64_t row, int64_t n0, int64_t count, float* out) {
        for (int64_t i = 0; i < count; ++i) {
          const int64_t n = n0 + i, g = n / width, j = q.j0 + n % width;
          out[i] = r[(g * H + j) * H + row];
        }
      });
      if (split_h) q.r_h = pack_panel_b(r + (2 * H + q.j0) * H, H, width, 1, H);
      dir.r.push_back(std::move(q));
    }
    if (st->has_bias) {
      const float* wb = ctx.input(3).data<float>() + d * 2 * GH;
      const float* rb = wb + GH;
      dir.bias.resize(static_cast<size_t>(GH));
      for (int64_t j = 0; j < GH; ++j) dir.bias[j] = wb[j] + (st->lbr && j >= 2 * H ? 0.0f : rb[j]);
      if (st->lbr) dir.rb_h.assign(rb + 2 * H, rb + 3 * H);
    }
    st->dir.push_back(std::move(dir));
  }
  return std::shared_ptr<KernelState>(st);
}

Status run_reference(KernelContext& ctx, Cell cell) {
  return cell == Cell::kLstm ? ref::lstm(ctx) : cell == Cell::kGru ? ref::gru(ctx) : ref::rnn(ctx);
}

// Whether this run's inputs are the ones the state was packed for, in a form it covers.
bool covered(const KernelContext& ctx, const RecurrentState& st) {
  if (!ctx.input_value(0).is_tensor()) return false;
  const Tensor& X = ctx.input(0);
  if (X.dtype() != DType::kFloat32 || X.rank() != 3 || X.dim(2) != st.I || X.numel() == 0) return false;
  if (ctx.has_input(3) != st.has_bias || (st.cell == Cell::kLstm && ctx.has_input(7))) return false;
  const int64_t S = st.batch_major ? X.dim(1) : X.dim(0), B = st.batch_major ? X.dim(0) : X.dim(1);
  if (ctx.has_input(4)) {  // sequence_lens: all the whole sequence
    const Tensor& sl = ctx.input(4);
    if (sl.dtype() != DType::kInt32 || sl.shape() != Shape{B}) return false;
    for (int64_t b = 0; b < B; ++b)
      if (sl.data<int32_t>()[b] != S) return false;
  }
  const Shape state = st.batch_major ? Shape{B, st.dirs, st.H} : Shape{st.dirs, B, st.H};
  for (int i : {5, 6}) {
    if (i == 6 && st.cell != Cell::kLstm) continue;
    if (ctx.has_input(i) && (!ctx.input_value(i).is_tensor() || ctx.input(i).dtype() != DType::kFloat32 ||
                             ctx.input(i).shape() != state))
      return false;
  }
  const int64_t limit = ctx.max_elements();
  const double need = static_cast<double>(S) * static_cast<double>(B) *
                      static_cast<double>(std::max(gate_count(st.cell) * st.H, st.dirs * st.H));
  return limit <= 0 || need <= static_cast<double>(limit);
}

struct Run {
  const RecurrentState& st;
  int64_t S = 0, B = 0;
  const float* x = nullptr;
  const float *h0 = nullptr, *c0 = nullptr;
  float *y = nullptr, *yh = nullptr, *yc = nullptr;  // null: not requested

  // Offsets of (t, b) in X's rows, of Y's (t, d, b) and of a state's (d, b), in the layout.
  int64_t x_row(int64_t t, int64_t b) const { return st.batch_major ? b * S + t : t * B + b; }
  int64_t y_at(int64_t t, int64_t d, int64_t b) const {
    return (st.batch_major ? (b * S + t) * st.dirs + d : (t * st.dirs + d) * B + b) * st.H;
  }
  int64_t state_at(int64_t d, int64_t b) const {
    return (st.batch_major ? b * st.dirs + d : d * B + b) * st.H;
  }

  // Runs direction d: its input projection on `threads`, then the steps, each slice of hidden
  // units on one of up to `threads` threads (an OpenMP team with a barrier per step).
  void direction(int64_t d, int threads) const {
    const Direction& dir = st.dir[static_cast<size_t>(d)];
    const int64_t H = st.H, GH = gate_count(st.cell) * H;
    const bool split_h = st.cell == Cell::kGru && !st.lbr;
    std::vector<float> xw(static_cast<size_t>(S * B * GH)), hr(static_cast<size_t>(B * GH));
    // h before and after each step (one buffer, updated in place, for the GRU's two products:
    // h is read only by the first).
    std::vector<float> h(static_cast<size_t>((split_h ? 1 : 2) * B * H)), c;
    if (st.cell == Cell::kLstm) c.assign(static_cast<size_t>(B * H), 0.0f);
    std::vector<float> gru(split_h ? static_cast<size_t>(3 * B * H) : 0);  // z, r h, (r h) R_h^T
    panel_product(dir.w, x, S * B, st.I, dir.bias.empty() ? nullptr : dir.bias.data(), 0.0f, xw.data(),
                  threads);
    for (int64_t b = 0; b < B; ++b) {
      if (h0) std::copy_n(h0 + state_at(d, b), H, h.data() + b * H);
      else std::fill_n(h.data() + b * H, H, 0.0f);
      if (c0) std::copy_n(c0 + state_at(d, b), H, c.data() + b * H);
    }
    const int64_t slices = static_cast<int64_t>(dir.r.size());
    const int team = omp_in_parallel() ? 1 : static_cast<int>(std::min<int64_t>(threads, slices));
    if (team > 1) {
#pragma omp parallel num_threads(team)
      steps(dir, d, xw.data(), hr.data(), h.data(), c.data(), gru.data(), omp_get_thread_num(),
            omp_get_num_threads());
    } else {
      steps(dir, d, xw.data(), hr.data(), h.data(), c.data(), gru.data(), 0, 1);
    }
    const float* last = h.data() + (split_h ? 0 : (S % 2) * B * H);
    for (int64_t b = 0; b < B; ++b) {
      if (yh) std::copy_n(last + b * H, H, yh + state_at(d, b));
      if (yc) std::copy_n(c.data() + b * H, H, yc + state_at(d, b));
    }
  }

  // Thread `tid` of `team`: every step, the slices tid, tid + team, ...; h[0..BH) and h[BH..2BH)
  // alternate as the step's input and output. A GRU without linear_before_reset runs each step
  // in two phases, z and r h of every slice, a barrier, then (r h) R_h^T and h of every slice.
  void steps(const Direction& dir, int64_t d, const float* xw, float* hr, float* h, float* c, float* gru,
             int tid, int team) const {
    const int64_t H = st.H, GH = gate_count(st.cell) * H;
    const bool split_h = st.cell == Cell::kGru && !st.lbr;
    const int64_t gr = split_h ? 2 : gate_count(st.cell);
    const bool reverse = st.reverse_only || d == 1;
    const VectorIsa isa = best_vector_isa();
    const float* rb_h = dir.rb_h.empty() ? nullptr : dir.rb_h.data();
    float *z = gru, *rh = gru + B * H, *hrh = gru + 2 * B * H;
    for (int64_t s = 0; s < S; ++s) {
      const int64_t t = reverse ? S - 1 - s : s;
      const float* hp = h + (split_h ? 0 : (s % 2) * B * H);
      float* hn = h + (split_h ? 0 : ((s + 1) % 2) * B * H);
      for (size_t k = static_cast<size_t>(tid); k < dir.r.size(); k += static_cast<size_t>(team)) {
        const Slice& q = dir.r[k];
        const int64_t j0 = q.j0, w = q.j1 - q.j0;
        float* hq = hr + B * gr * j0;  // this slice's [B, gr w]
        panel_product(q.r, hp, B, H, nullptr, 0.0f, hq, 1);
        for (int64_t b = 0; b < B; ++b) {
          const float* xb = xw + x_row(t, b) * GH + j0;
          const float* hb = hq + b * gr * w;
          switch (st.cell) {
            case Cell::kLstm: lstm_cell(isa, xb, H, hb, w, c + b * H + j0, hn + b * H + j0, w, st.clip); break;
            case Cell::kRnn: rnn_cell(isa, xb, hb, hn + b * H + j0, w, st.clip); break;
            case Cell::kGru:
              if (st.lbr)
                gru_cell_lbr(isa, xb, H, hb, w, rb_h ? rb_h + j0 : nullptr, hp + b * H + j0, hn + b * H + j0, w,
                             st.clip);
              else
                gru_reset(isa, xb, H, hb, w, hp + b * H + j0, z + b * H + j0, rh + b * H + j0, w, st.clip);
              break;
          }
          if (y && !split_h) std::copy_n(hn + b * H + j0, w, y + y_at(t, d, b) + j0);
        }
      }
      if (split_h) {
        if (team > 1) {
#pragma omp barrier
        }
        for (size_t k = static_cast<size_t>(tid); k < dir.r.size(); k += static_cast<size_t>(team)) {
          const Slice& q = dir.r[k];
          const int64_t j0 = q.j0, w = q.j1 - q.j0;
          float* hq = hrh + B * j0;  // this slice's [B, w]
          panel_product(q.r_h, rh, B, H, nullptr, 0.0f, hq, 1);
          for (int64_t b = 0; b < B; ++b) {
            gru_update(isa, xw + x_row(t, b) * GH + 2 * H + j0, hq + b * w, z + b * H + j0, hn + b * H + j0, w,
                       st.clip);
            if (y) std::copy_n(hn + b * H + j0, w, y + y_at(t, d, b) + j0);
          }
        }
      }
      if (team > 1) {
#pragma omp barrier
      }
    }
  }
};

Status run(KernelContext& ctx, Cell cell) {
  const auto* st = dynamic_cast<const RecurrentState*>(ctx.state());
  if (!st || !st->why_not.empty() || !covered(ctx, *st)) return run_reference(ctx, cell);
  const Tensor& X = ctx.input(0);
  Run r{*st};
  r.S = st->batch_major ? X.dim(1) : X.dim(0);
  r.B = st->batch_major ? X.dim(0) : X.dim(1);
  r.x = X.data<float>();
  if (ctx.has_input(5)) r.h0 = ctx.input(5).data<float>();
  if (cell == Cell::kLstm && ctx.has_input(6)) r.c0 = ctx.input(6).data<float>();
  const int64_t S = r.S, B = r.B, D = st->dirs, H = st->H;
  const Shape y_shape = st->batch_major ? Shape{B, S, D, H} : Shape{S, D, B, H};
  const Shape state = st->batch_major ? Shape{B, D, H} : Shape{D, B, H};
  float** outs[3] = {&r.y, &r.yh, &r.yc};
  for (int i = 0; i < (cell == Cell::kLstm ? 3 : 2); ++i) {
    if (!ctx.output_requested(i)) continue;
    OSPREY_ASSIGN_OR_RETURN(Tensor t, ctx.new_output_uninitialized(i, DType::kFloat32, i == 0 ? y_shape : state));
    *outs[i] = t.data<float>();
  }
  const int threads = ctx.pool() ? ctx.pool()->num_threads() : 1;
  if (D == 1) {
    r.direction(0, threads);
  } else {
    ctx.parallel_for(D, S * B * H * gate_count(cell) * (st->I + H), [&](int64_t b, int64_t e) {
      for (int64_t d = b; d < e; ++d) r.direction(d, 1);
    });
  }
  return Status::Ok();
}

}  // namespace

Status lstm(KernelContext& ctx) { return run(ctx, Cell::kLstm); }
Status gru(KernelContext& ctx) { return run(ctx, Cell::kGru); }
Status rnn(KernelContext& ctx) { return run(ctx, Cell::kRnn); }

Result<std::shared_ptr<KernelState>> prepare_lstm(const KernelContext& ctx) { return prepare(ctx, Cell::kLstm); }
Result<std::shared_ptr<KernelState>> prepare_gru(const KernelContext& ctx) { return prepare(ctx, Cell::kGru); }
Result<std::shared_ptr<KernelState>> prepare_rnn(const KernelContext& ctx) { return prepare(ctx, Cell::kRnn); }

}  // namespace cpu
}  // namespace osprey
