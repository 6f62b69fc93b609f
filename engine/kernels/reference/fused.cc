// Reference kernels of the com.osprey fused ops that the optimizer's fusion passes create
// (engine/passes/*_fusion.cc). All are float32 only.
//
//   FusedConv(X, W, B?, Z?)       Y = act(Conv(X, W) + B + Z); every Conv attribute, plus
//                                 `activation` and `activation_params` (below). Z, the residual,
//                                 has the shape of Y (no broadcasting). channels_last = 1: X, Z
//                                 and Y are [N, spatial..., C] instead of [N, C, spatial...]
//                                 (W is unchanged); the oracle transposes around the Conv.
//                                 channels_blocked = b (8 or 16; 2-D only): X, Z and Y are
//                                 [N, C/b, H, W, b], channel c at [c / b, ..., c % b] (oneDNN's
//                                 nChw8c / nChw16c; the channels_blocked pass makes it).
//   FusedMatMul(A, B, bias?, Z?)  Y = act(A . B + bias + Z); A is N-D [..., K], B is 2-D [K, N]
//                                 (or [N, K] when trans_b = 1), bias is [N], Z has Y's shape.
//   Gelu(X)                       approximate = "none" (erf form) or "tanh".
//   LayerNormalization(X, Scale, B?)  ONNX-17 LayerNormalization (axis, epsilon), output Y only.
//   MaxPool(X)                    ONNX MaxPool's attributes and output Y (no Indices), plus
//                                 channels_last = 1: X and Y are [N, spatial..., C] (the
//                                 channels_last pass makes it); the oracle transposes around the
//                                 reference MaxPool.
//
// activation: "" (none), Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Silu, Mish,
// Gelu, GeluTanh. activation_params: Clip [min, max], LeakyRelu [alpha], HardSigmoid [alpha,
// beta]; none for the others. activation_affine = [scale, shift] (optional, FusedConv and
// FusedMatMul): Y = act(...) * scale + shift, the per-tensor affine some exports put after an
// activation (PP-LCNetV3's learnable affine blocks). The convolution and the matrix product are
// the reference Conv and the shared GEMM core; activations come from activation.h, as the
// unfused kernels use.
#include <cmath>
#include <string>
#include <vector>

#include "kernels/reference/activation.h"
#include "kernels/reference/common.h"
#include "kernels/reference/gemm_core.h"
#include "kernels/reference/reduction_util.h"

namespace osprey::ref {

Status conv(KernelContext& ctx);                 // conv.cc
Status max_pool(KernelContext& ctx);             // pool.cc

namespace {

enum class Act {
  kNone,
  kRelu,
  kClip,
  kLeakyRelu,
  kSigmoid,
  kHardSigmoid,
  kHardSwish,
  kTanh,
  kSilu,
  kGelu,
  kGeluTanh,
  kMish
};

struct Activation {
  Act kind = Act::kNone;
  float a = 0, b = 0;  // Clip min/max, LeakyRelu alpha, HardSigmoid alpha/beta
  bool affine = false;  // then * scale + shift after the activation
  float scale = 1, shift = 0;
};

Status read_activation(const KernelContext& ctx, Activation* act) {
  struct Entry {
    const char* name;
    Act kind;
    size_t params;
  };
  static const Entry kActs[] = {
      {"", Act::kNone, 0},
      {"Relu", Act::kRelu, 0},
      {"Clip", Act::kClip, 2},
      {"LeakyRelu", Act::kLeakyRelu, 1},
      {"Sigmoid", Act::kSigmoid, 0},
      {"HardSigmoid", Act::kHardSigmoid, 2},
      {"HardSwish", Act::kHardSwish, 0},
      {"Tanh", Act::kTanh, 0},
      {"Silu", Act::kSilu, 0},
      {"Gelu", Act::kGelu, 0},
      {"GeluTanh", Act::kGeluTanh, 0},
      {"Mish", Act::kMish, 0},
  };
  const std::string name = ctx.attr_string("activation", "");
  const std::vector<float> params = ctx.attr_floats("activation_params");
  for (const Entry& e : kActs) {
    if (name != e.name) continue;
    if (params.size() != e.params)
      return invalid_argument("activation ", name.empty() ? "(none)" : name, " takes ", e.params,
                              " activation_params, got ", params.size());
    act->kind = e.kind;
    if (e.params > 0) act->a = params[0];
    if (e.params > 1) act->b = params[1];
    if (ctx.has_attr("activation_affine")) {
      const std::vector<float> affine = ctx.attr_floats("activation_affine");
      if (affine.size() != 2)
        return invalid_argument("attribute activation_affine takes 2 values [scale, shift], got ",
                                affine.size());
      act->affine = true;
      act->scale = affine[0];
      act->shift = affine[1];
    }
    return Status::Ok();
  }
  return invalid_argument("unknown activation '", name, "'");
}

float activate(const Activation& act, float x) {
  switch (act.kind) {
    case Act::kNone: return x;
    case Act::kRelu: return x > 0 ? x : 0.0f;
    case Act::kClip: return x < act.a ? act.a : (x > act.b ? act.b : x);
    case Act::kLeakyRelu: return leaky_relu(x, act.a);
    case Act::kSigmoid: return sigmoid(x);
    case Act::kHardSigmoid: return hard_sigmoid(x, act.a, act.b);
    case Act::kHardSwish: return hardswish(x);
    case Act::kTanh: return std::tanh(x);
    case Act::kSilu: return silu(x);
    case Act::kGelu: return gelu_erf(x);
    case Act::kGeluTanh: return gelu_tanh(x);
    case Act::kMish: return x * std::tanh(x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)));
  }
  return x;
}

float apply(const Activation& act, float x) {
  const float y = activate(act, x);
  return act.affine ? y * act.scale + act.shift : y;
}

Status require_float32(const KernelContext& ctx, int i, const char* what) {
  if (!ctx.has_input(i)) return Status::Ok();
  if (!ctx.input_value(i).is_tensor() || ctx.input(i).dtype() != DType::kFloat32)
    return invalid_argument(what, " must be a float32 tensor");
  return Status::Ok();
}

// y = act(y + z) in place; z (optional input `zi`) must have y's shape.
Status add_residual_and_activate(const KernelContext& ctx, int zi, const Activation& act,
                                 Tensor& y) {
  float* p = y.data<float>();
  const int64_t n = y.numel();
  if (ctx.has_input(zi)) {
    OSPREY_RETURN_IF_ERROR(require_float32(ctx, zi, "residual Z"));
    const Tensor& z = ctx.input(zi);
    if (z.shape() != y.shape())
      return invalid_argument("residual Z has shape ", shape_to_string(z.shape()),
                              ", expected the output shape ", shape_to_string(y.shape()));
    const float* q = z.data<float>();
    for (int64_t i = 0; i < n; ++i) p[i] = apply(act, p[i] + q[i]);
  } else if (act.kind != Act::kNone || act.affine) {
    for (int64_t i = 0; i < n; ++i) p[i] = apply(act, p[i]);
  }
  return Status::Ok();
}

// perm taking [N, spatial..., C] to [N, C, spatial...] (to_first) or back.
std::vector<int64_t> channels_perm(int64_t rank, bool to_first) {
  std::vector<int64_t> p = {0};
  if (to_first) p.push_back(rank - 1);
  for (int64_t d = 1; d + 1 < rank; ++d) p.push_back(to_first ? d : d + 1);
  if (!to_first) p.push_back(1);
  return p;
}

// The channels_last attribute (0 or 1) into *channels_last and, when it is 1, input X as
// [N, C, spatial...] into *x_first (the oracles transpose around the NCHW reference op).
Status channels_first_input(const KernelContext& ctx, bool* channels_last, Value* x_first) {
  const int64_t cl = ctx.attr_int("channels_last", 0);
  if (cl != 0 && cl != 1) return invalid_argument("attribute channels_last must be 0 or 1, got ", cl);
  *channels_last = cl == 1;
  const Tensor& x = ctx.input(0);
  if (*channels_last && x.rank() < 3)
    return invalid_argument("X has shape ", shape_to_string(x.shape()), "; channels_last needs rank >= 3");
  if (*channels_last) {
    OSPREY_ASSIGN_OR_RETURN(Tensor t, transposed(x, channels_perm(x.rank(), true)));
    *x_first = Value(std::move(t));
  }
  return Status::Ok();
}

// The channels_blocked attribute (0, 8 or 16) into *block and, when set, input X
// [N, C/b, H, W, b] as [N, C, H, W] into *x_first.
Status blocked_input(const KernelContext& ctx, int64_t* block, Value* x_first) {
  const int64_t b = ctx.attr_int("channels_blocked", 0);
  if (b != 0 && b != 8 && b != 16)
    return invalid_argument("attribute channels_blocked must be 0, 8 or 16, got ", b);
  *block = b;
  if (b == 0) return Status::Ok();
  if (ctx.attr_int("channels_last", 0) != 0)
    return invalid_argument("channels_last and channels_blocked cannot both be set");
  if (!ctx.has_input(0)) return invalid_argument("input X is required");
  const Tensor& x = ctx.input(0);
  if (x.rank() != 5 || x.dim(4) != b)
    return invalid_argument("X has shape ", shape_to_string(x.shape()),
                            "; channels_blocked = ", b, " needs [N, C/", b, ", H, W, ", b, "]");
  OSPREY_ASSIGN_OR_RETURN(Tensor t, transposed(x, {0, 1, 4, 2, 3}));
  *x_first = Value(t.reshaped({x.dim(0), x.dim(1) * b, x.dim(2), x.dim(3)}));
  return Status::Ok();
}

// Y [N, M, OH, OW] as [N, M/b, OH, OW, b].
Result<Tensor> blocked_output(const Tensor& y, int64_t b) {
  if (y.rank() != 4 || y.dim(1) % b != 0)
    return invalid_argument("the output has shape ", shape_to_string(y.shape()),
                            "; channels_blocked = ", b, " needs a multiple of ", b, " channels");
  return transposed(y.reshaped({y.dim(0), y.dim(1) / b, b, y.dim(2), y.dim(3)}), {0, 1, 3, 4, 2});
}

}  // namespace

Status fused_conv(KernelContext& ctx) {
  Activation act;
  OSPREY_RETURN_IF_ERROR(read_activation(ctx, &act));
  for (int i = 0; i < 3; ++i)
    OSPREY_RETURN_IF_ERROR(require_float32(ctx, i, i == 0 ? "X" : i == 1 ? "W" : "B"));
  bool channels_last = false;
  int64_t block = 0;
  Value x_first;
  OSPREY_RETURN_IF_ERROR(blocked_input(ctx, &block, &x_first));
  if (!block) OSPREY_RETURN_IF_ERROR(channels_first_input(ctx, &channels_last, &x_first));
  // The convolution with bias is the reference Conv, run on this node's first three inputs
  // (X in [N, C, spatial...]).
  std::vector<const Value*> conv_inputs = {channels_last || block ? &x_first : &ctx.input_value(0),
                                           &ctx.input_value(1),
                                           ctx.has_input(2) ? &ctx.input_value(2) : nullptr};
  std::vector<Value> conv_outputs(1);
  KernelContext inner(ctx.node(), std::move(conv_inputs), &conv_outputs, ctx.max_elements(),
                      nullptr, ctx.pool());
  OSPREY_RETURN_IF_ERROR(conv(inner));
  if (!inner.attribute_error().empty()) return invalid_argument(inner.attribute_error());
  Tensor y = conv_outputs[0].tensor;
  if (channels_last) {
    OSPREY_ASSIGN_OR_RETURN(y, transposed(y, channels_perm(y.rank(), false)));
  }
  if (block) {
    OSPREY_ASSIGN_OR_RETURN(y, blocked_output(y, block));
  }
  OSPREY_RETURN_IF_ERROR(add_residual_and_activate(ctx, 3, act, y));
  ctx.set_output(0, std::move(y));
  return Status::Ok();
}

Status channels_last_max_pool(KernelContext& ctx) {
  if (ctx.has_input(0) && ctx.input(0).dtype() != DType::kUInt8 && ctx.input(0).dtype() != DType::kInt8)
    OSPREY_RETURN_IF_ERROR(require_float32(ctx, 0, "X"));  // float32, or a quantized model's bytes
  if (ctx.output_requested(1)) return invalid_argument("com.osprey MaxPool has no Indices output");
  if (!ctx.has_input(0)) return invalid_argument("input X is required");
  bool channels_last = false;
  Value x_first;
  OSPREY_RETURN_IF_ERROR(channels_first_input(ctx, &channels_last, &x_first));
  std::vector<Value> outputs(1);
  KernelContext inner(ctx.node(), {channels_last ? &x_first : &ctx.input_value(0)}, &outputs,
                      ctx.max_elements(), nullptr, ctx.pool());
  OSPREY_RETURN_IF_ERROR(max_pool(inner));
  if (!inner.attribute_error().empty()) return invalid_argument(inner.attribute_error());
  Tensor y = outputs[0].tensor;
  if (channels_last) {
    OSPREY_ASSIGN_OR_RETURN(y, transposed(y, channels_perm(y.rank(), false)));
  }
  ctx.set_output(0, std::move(y));
  return Status::Ok();
}

Status fused_matmul(KernelContext& ctx) {
  Activation act;
  OSPREY_RETURN_IF_ERROR(read_activation(ctx, &act));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return invalid_argument("A and B are required");
  for (int i = 0; i < 3; ++i)
    OSPREY_RETURN_IF_ERROR(require_float32(ctx, i, i == 0 ? "A" : i == 1 ? "B" : "bias"));
  const int64_t trans_b = ctx.attr_int("trans_b", 0);
  if (trans_b != 0 && trans_b != 1) return invalid_argument("trans_b must be 0 or 1");
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.rank() < 1) return invalid_argument("A must have rank >= 1, got a scalar");
  if (b.rank() != 2) return invalid_argument("B must be 2-D, got ", shape_to_string(b.shape()));
  const int64_t K = a.dim(a.rank() - 1);
  const int64_t N = trans_b ? b.dim(0) : b.dim(1);
  if ((trans_b ? b.dim(1) : b.dim(0)) != K)
    return invalid_argument("inner dimensions differ: A ", shape_to_string(a.shape()), ", B ",
                            shape_to_string(b.shape()), trans_b ? " (transposed)" : "");
  Shape out(a.shape().begin(), a.shape().end() - 1);
  out.push_back(N);
  const int64_t M = K > 0 ? a.numel() / K : shape_numel(Shape(out.begin(), out.end() - 1));
  const float* bias = nullptr;
  if (ctx.has_input(2)) {
    const Tensor& bt = ctx.input(2);
    if (bt.rank() != 1 || bt.dim(0) != N)
      return invalid_argument("bias has shape ", shape_to_string(bt.shape()), ", expected [", N,
                              "]");
    bias = bt.data<float>();
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_tensor(DType::kFloat32, out));
  float* yp = y.data<float>();
  gemm<float>(false, trans_b != 0, M, N, K, 1.0f, a.data<float>(), K, b.data<float>(),
              trans_b ? K : N, 0.0f, yp, N, ctx.pool());
  if (bias)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t j = 0; j < N; ++j) yp[m * N + j] += bias[j];
  OSPREY_RETURN_IF_ERROR(add_residual_and_activate(ctx, 3, act, y));
  ctx.set_output(0, std::move(y));
  return Status::Ok();
}

// Gelu: ours (float32) and ONNX's from opset 20 (any float type; float16 and bfloat16
// computed in float32).
Status gelu(KernelContext& ctx) {
  if (!ctx.has_input(0)) return invalid_argument("X is required");
  const std::string approx = ctx.attr_string("approximate", "none");
  if (approx != "none" && approx != "tanh")
    return invalid_argument("attribute approximate must be 'none' or 'tanh', got '", approx, "'");
  const bool tanh_form = approx == "tanh";
  const Tensor& x = ctx.input(0);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), x.shape()));
  return dispatch<FloatTypes>(x.dtype(), "Gelu", [&]<class T>() {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const C v = static_cast<C>(static_cast<compute_t<T>>(in[i]));
      out[i] = cast_to<T>(tanh_form ? gelu_tanh(v) : gelu_erf(v));
    }
    return Status::Ok();
  });
}

Status check_fused_layer_norm(const KernelContext& ctx) {
  for (int i = 0; i < 3; ++i)
    OSPREY_RETURN_IF_ERROR(require_float32(ctx, i, i == 0 ? "X" : i == 1 ? "Scale" : "B"));
  for (int i = 1; i < ctx.num_outputs(); ++i)
    if (ctx.output_requested(i))
      return invalid_argument("com.osprey LayerNormalization has only the output Y");
  return Status::Ok();
}

// LayerNormalization in the com.osprey domain: the ONNX-17 kernel, output Y only.
Status fused_layer_normalization(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(check_fused_layer_norm(ctx));
  return layer_normalization(ctx);
}

}  // namespace osprey::ref
