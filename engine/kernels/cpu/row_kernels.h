// Vectorized row kernels for the ops oneDNN does not cover well here (LayerNorm, InstanceNorm,
// ReduceSum/ReduceMean, Sigmoid, Tanh, Exp, QuantizeLinear/DequantizeLinear/QLinearAdd, the attention's
// masked softmax, the channels-last max pool, the interleaving of a few channel planes): plain loops
// shaped for the vectorizer (fixed-width lane blocks, sums in double lanes), compiled three
// times (AVX-512, AVX2+FMA, and generic x86-64) and chosen at run time from the CPU's features. The reference kernels are their oracles in the tests.
#pragma once

#include <cstdint>

namespace osprey::cpu {

enum class VectorIsa { generic, avx2, avx512 };

const char* vector_isa_name(VectorIsa isa);
bool vector_isa_supported(VectorIsa isa);  // the CPU (and OS) can run this variant
VectorIsa best_vector_isa();               // the widest supported variant, read once

// Normalizes `rows` rows of `m` contiguous floats: y = (x - mean) / sqrt(var + eps) * scale
// (+ bias, when not null); mean and (biased) variance are summed in double. x and y may alias.
void layer_norm_rows(VectorIsa isa, const float* x, float* y, int64_t rows, int64_t m,
                     const float* scale, const float* bias, double eps);

// GroupNormalization (and InstanceNormalization, cg = 1) over `rows` groups of cg planes of m
// contiguous floats: row r is group g = (first_row + r) % groups, y = (x - mean) /
// sqrt(var + eps) * scale + bias over its cg * m values, mean and (biased) variance summed in
// double; plane c takes scale[g * cg + c] and bias[g * cg + c] (per_channel: InstanceNorm,
// GroupNorm-21) or scale[g] and bias[g] (GroupNorm-18). x and y may alias.
void group_norm_rows(VectorIsa isa, const float* x, float* y, int64_t rows, int64_t cg, int64_t m,
                     const float* scale, const float* bias, bool per_channel, int64_t groups, int64_t first_row,
                     double eps);

// Views x as [outer, r, inner] and writes y[o, i] = mult * sum over k < r of x[o, k, i] for
// o in [o_begin, o_end) and every i, summed in double (mult = 1 for a sum, 1/r for a mean).
void sum_middle_axis(VectorIsa isa, const float* x, float* y, int64_t o_begin, int64_t o_end,
                     int64_t r, int64_t inner, double mult);

// The middle-axis kernels below view x as [outer, n, inner] and hand out their work in blocks
// of up to 16 consecutive columns (o, i) of one o: column_blocks(inner) blocks per o, block
// b covering o = b / column_blocks(inner). With inner 1 a block is one column (one row of n).
int64_t column_blocks(int64_t inner);

// Softmax (LogSoftmax with `log`) along the middle axis (inner > 1) for the columns of blocks
// [block_begin, block_end): y[o, k, i] = e^(x[o, k, i] - max) / sum over k (or x - max - log
// sum), exp as softmax_rows' and sums in float; a column holding NaN, or all -inf, gives NaN.
// x and y may be the same array.
void softmax_middle_axis(VectorIsa isa, const float* x, float* y, int64_t n, int64_t inner,
                         int64_t block_begin, int64_t block_end, bool log);

// ReduceMax (ReduceMin with `min`) along the middle axis (n = r elements): y[o, i] = the
// extreme of x[o, k, i] over k < r >= 1, for the columns of blocks [block_begin, block_end)
// (with inner 1: rows). Bit for bit the reference's: NaN propagates, and of +0 and -0 the first
// in order stays. x and y must not overlap.
void extreme_middle_axis(VectorIsa isa, const float* x, float* y, int64_t r, int64_t inner,
                         int64_t block_begin, int64_t block_end, bool min);

// ArgMax (ArgMin with `min`) along the middle axis (n = r elements, 1 <= r < 2^31): y[o, i] =
// the index k of the extreme of x[o, k, i], for the columns of blocks [block_begin, block_end)
// (with inner 1: rows). As the reference: a NaN counts as the extreme, and of equal values the
// first index wins (the last with `last`: select_last_index).
void arg_extreme_middle_axis(VectorIsa isa, const float* x, int64_t* y, int64_t r, int64_t inner,
                             int64_t block_begin, int64_t block_end, bool min, bool last);

// CumSum along the middle axis (inner > 1) for the columns of blocks [block_begin,
// block_end), bit for bit the reference's: each column's running sum in double, rounded to
// float at every step (exclusive: before the element is added; reverse: from the end). x and y
// must not overlap.
void cumsum_middle_axis(VectorIsa isa, const float* x, float* y, int64_t n, int64_t inner,
                        int64_t block_begin, int64_t block_end, bool exclusive, bool reverse);

// Softmax in place over `rows` rows of n contiguous floats, after adding a mask when `mask` is
// not null: row i, element k adds mask[i * mask_row_stride + k * mask_key_stride] (a stride of
// 0 broadcasts). exp is a float polynomial (Cephes' expf, within 2 ulp); an element more than
// 87 below its row's max gets 0. A row holding NaN, or all -inf, gives NaN, as the reference.
// With `inv_sums` not null the rows are left unnormalized (e^(x - max)) and inv_sums[i] gets
// row i's 1 / sum, for a caller that scales a smaller product of the row instead.
void softmax_rows(VectorIsa isa, float* s, int64_t rows, int64_t n, const float* mask,
                  int64_t mask_row_stride, int64_t mask_key_stride, float* inv_sums = nullptr);

// y[k] = 1 / (1 + e^-x[k]) for k < n, exp as softmax_rows' (within a few ulp of the
// reference's; 0 below -87, NaN stays NaN). x and y may be the same array.
void sigmoid(VectorIsa isa, const float* x, float* y, int64_t n);

// y[k] = tanh(x[k]): sign(x) (1 - e) / (1 + e), e = e^(-2|x|), its series to x^7 below |x|
// 0.0625 (within 1e-6 relative of std::tanh; NaN stays NaN). x and y may be the same array.
void tanh_row(VectorIsa isa, const float* x, float* y, int64_t n);
// y[k] = e^x[k] over the whole float range (within a few ulp of std::exp, denormal results
// included; inf above 88.72, 0 below -104, NaN stays NaN). x and y may be the same array.
void exp_row(VectorIsa isa, const float* x, float* y, int64_t n);

// Gelu (com.osprey): y[k] = 0.5 x (1 + erf(x / sqrt 2)), or with tanh_form the tanh
// approximation 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), within a few 1e-7 relative
// of the reference's (erf through a rational erfc within 1.2e-7, exp as softmax_rows').
// x and y may be the same array.
void gelu(VectorIsa isa, const float* x, float* y, int64_t n, bool tanh_form);

// Gelu in place over a matrix product's output (FusedMatMul's activation, float32 or bf16
// compute): the erf form through a rational erf (no exp; within 1.5e-6 absolute of the exact
// Gelu, the float rounding of the result at |x| near 9), the tanh form as gelu(). y holds n
// floats, or n bfloat16 values (bits) when `bf16`, rounded to nearest even.
void gelu_fast_inplace(VectorIsa isa, void* y, int64_t n, bool bf16, bool tanh_form);

// Recurrent cells (the LSTM, GRU and RNN kernels), one batch row of H hidden units at a time:
// each gate's pre-activation is x (the input projection, with the biases that add) plus hr
// (the hidden state times R^T), clamped to [-clip, clip] (clip = +infinity for none), then
// ONNX's default activations: sigmoid as sigmoid() above, tanh as sign(v) (1 - e) / (1 + e)
// with e = e^(-2|v|), its series to v^7 below |v| 0.0625 (within a few 1e-7 of std::tanh).
// x and hr hold the gates in ONNX's order (lstm_cell, gru_cell_lbr and gru_reset: n units of
// each gate, gate g at x + g x_gate_stride and hr + g hr_gate_stride, for a slice of the hidden
// units; rnn_cell and gru_update: one gate, n units).
// LSTM, gates i, o, f, c: c = f c + i g, h = o tanh(c) (c updated in place).
void lstm_cell(VectorIsa isa, const float* x, int64_t x_gate_stride, const float* hr,
               int64_t hr_gate_stride, float* c, float* h, int64_t n, float clip);
// GRU with linear_before_reset, gates z, r, h: n = tanh(x_h + r (hr_h + rb_h)) (rb_h, R's bias
// of the h gate, may be null), h = (1 - z) n + z h_prev (h may be h_prev).
void gru_cell_lbr(VectorIsa isa, const float* x, int64_t x_gate_stride, const float* hr,
                  int64_t hr_gate_stride, const float* rb_h, const float* h_prev, float* h, int64_t n,
                  float clip);
// GRU without it, around the product (r h) R_h^T: gru_reset writes z and rh = r h from the z and
// r gates; gru_update then n = tanh(x_h + hrh) (x_h: the h gate of x, with both its biases) and
// h = (1 - z) n + z h (in place).
void gru_reset(VectorIsa isa, const float* x, int64_t x_gate_stride, const float* hr,
               int64_t hr_gate_stride, const float* h, float* z, float* rh, int64_t n, float clip);
void gru_update(VectorIsa isa, const float* x_h, const float* hrh, const float* z, float* h,
                int64_t n, float clip);
// RNN: h = tanh(x + hr).
void rnn_cell(VectorIsa isa, const float* x, const float* hr, float* h, int64_t n, float clip);

// Element-wise float ops over n floats, y[k] = op(x[k]), each the reference's float arithmetic
// in its order, so bit for bit its result: LeakyRelu (alpha), Sqrt, HardSigmoid (alpha, beta;
// NaN gives 1 as there), HardSwish, Abs, Neg, Reciprocal; Erf is a polynomial within 2e-7 of
// std::erf (relative below |x| 1, absolute above); Affine is alpha x + beta (fused where the ISA
// has a multiply-add: BatchNormalization's per-channel map); Log (Cephes' logf), Softplus, Elu
// (alpha; its e^x - 1 accurate near 0, as std::expm1) and Mish are within a few 1e-7 relative of
// the reference's; Floor, Ceil and Round (half to even, +0 for x in [-0.5, 0) as the reference)
// are exact. x and y may be the same array.
enum class UnaryOp {
  kLeakyRelu, kSqrt, kErf, kHardSigmoid, kHardSwish, kAbs, kNeg, kReciprocal, kAffine, kLog, kSoftplus, kElu,
  kFloor, kCeil, kRound, kMish
};
void unary_row(VectorIsa isa, UnaryOp op, const float* x, float* y, int64_t n, float alpha = 0,
               float beta = 0);

// Add, Sub, Mul, Div, Max and Min of two float runs: y[k] = a[k] op b[k] for k < n, where an
// input that is not a vector (a_vec or b_vec false) is its one value a[0] (b[0]) throughout.
// Each element is the reference's float operation (Max and Min: a NaN operand wins, a's when
// both are; of +0 and -0, a), bit for bit. y may be a or b (the same elements).
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMax, kMin };
void binary_row(VectorIsa isa, BinaryOp op, const float* a, bool a_vec, const float* b, bool b_vec,
                float* y, int64_t n);

// *lo = min(0, x[0..n)), *hi = max(0, x[0..n)), NaNs skipped (DynamicQuantizeLinear's range).
void min_max_row(VectorIsa isa, const float* x, int64_t n, float* lo, float* hi);

// QuantizeLinear with one scale and zero point over n floats: y[k] = round_half_even(x[k] /
// scale) + zp, saturated to uint8 (int8 when is_signed); NaN gives 0. Bit for bit the
// reference's result (the same float division and rounding).
void quantize_row(VectorIsa isa, const float* x, void* y, int64_t n, float scale, int32_t zp,
                  bool is_signed);
// QLinearAdd (com.osprey; a QDQ graph's DequantizeLinear(a) + DequantizeLinear(b) [-> Relu] ->
// QuantizeLinear): y[k] = QuantizeLinear(act(float(a[k] - a_zp) * a_scale + float(b[k] - b_zp) *
// b_scale)), in the graph's float operations, so bit for bit the reference's. Each of a, b, y
// is uint8 or int8 (the *_signed flags).
struct QAddParams {
  float a_scale = 1, b_scale = 1, y_scale = 1;
  int32_t a_zero_point = 0, b_zero_point = 0, y_zero_point = 0;
  bool a_signed = false, b_signed = false, y_signed = false, relu = false;
};
void qlinear_add_row(VectorIsa isa, const void* a, const void* b, void* y, int64_t n,
                     const QAddParams& p);
// DequantizeLinear with one scale and zero point: y[k] = float(x[k] - zp) * scale over n uint8
// (int8 when is_signed) values, as the reference.
void dequantize_row(VectorIsa isa, const void* x, float* y, int64_t n, float scale, int32_t zp,
                    bool is_signed);

// A 2-D max pool's geometry over channels-last tensors: X [N, H, W, C], Y [N, OH, OW, C];
// kernel KH x KW, strides, dilations and the leading pads (a window tap outside the input is
// skipped, as ONNX's padding for MaxPool).
struct PoolGeometry {
  int64_t H, W, C, OH, OW, KH, KW, SH, SW, DH, DW, PH, PW;
};

// Writes output rows [row_begin, row_end) of the N * OH rows of Y (each OW * C floats): the
// max over each window's valid taps, element by element in the reference's order (a tap is
// taken where it is greater, so NaNs propagate as there); a window without a valid tap gets
// the lowest float, as the reference. x and y must not overlap.
void max_pool_nhwc_rows(VectorIsa isa, const float* x, float* y, const PoolGeometry& g,
                        int64_t row_begin, int64_t row_end);
// The same over uint8 (int8 when is_signed) tensors: a quantized model's max pools.
void max_pool_nhwc_rows_bytes(VectorIsa isa, const void* x, void* y, bool is_signed, const PoolGeometry& g,
                              int64_t row_begin, int64_t row_end);
// The same over bfloat16 tensors (their uint16_t bits), compared as the floats they widen to;
// Y holds exactly the winning inputs. A window without a valid tap gets the lowest bfloat16.
void max_pool_nhwc_rows_bf16(VectorIsa isa, const uint16_t* x, uint16_t* y, const PoolGeometry& g,
                             int64_t row_begin, int64_t row_end);

// Interleaves `planes` planes of `plane` floats each (x is [planes, plane]) into y [plane,
// planes], for the pixels [begin, end): y[q * planes + c] = x[c * plane + q]. It is the NCHW ->
// NHWC transpose of one image with few channels (a model's RGB input), where oneDNN's reorder
// runs at a quarter of this speed. x and y must not overlap.
void interleave_planes(VectorIsa isa, const float* x, float* y, int64_t planes, int64_t plane,
                       int64_t begin, int64_t end);

}  // namespace osprey::cpu
