#include "passes/shape_inference.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "passes/pass_util.h"

namespace osprey::passes {
namespace {

using Type = ir::Attribute::Type;

int64_t attr_int(const ir::Node& n, const char* name, int64_t def) {
  const auto* a = n.find_attribute(name);
  return a && a->type == Type::kInt ? a->i : def;
}

bool attr_ints(const ir::Node& n, const char* name, std::vector<int64_t>* out) {
  const auto* a = n.find_attribute(name);
  if (!a || a->type != Type::kInts) return false;
  *out = a->ints;
  return true;
}

std::string attr_string(const ir::Node& n, const char* name, const std::string& def) {
  const auto* a = n.find_attribute(name);
  return a && a->type == Type::kString ? a->s : def;
}

SymDim fixed_dim(int64_t v) {
  return SymDim{v, ""};
}
SymDim sym_dim(std::string s) {
  return SymDim{-1, std::move(s)};
}

class Inference {
 public:
  Inference(const ir::Graph& g, ShapeFacts& f) : g_(g), f_(f) {}

  void seed(bool in_subgraph) {
    for (const auto& [id, t] : g_.initializers) {
      if (!is_constant(g_, id) || !t.defined()) continue;
      SymShape s;
      for (int64_t d : t.shape()) s.push_back(fixed_dim(d));
      set_shape(id, std::move(s));
      if (t.dtype() == DType::kInt64 && t.rank() <= 1 && t.numel() <= 64) {
        SymShape c;
        for (int64_t i = 0; i < t.numel(); ++i) {
          const int64_t v = t.data<int64_t>()[i];
          c.push_back(v == -1 ? infer_marker() : fixed_dim(v));
        }
        set_contents(id, std::move(c));
      }
    }
    if (in_subgraph) return;
    for (int id : g_.inputs) {
      if (f_.has_shape[static_cast<size_t>(id)]) continue;
      const ir::ValueType& vt = g_.values[static_cast<size_t>(id)].type;
      if (vt.kind != ir::ValueType::Kind::kTensor || !vt.has_shape) continue;
      SymShape s;
      for (size_t i = 0; i < vt.shape.size(); ++i) {
        const Dim& d = vt.shape[i];
        if (d.is_fixed())
          s.push_back(fixed_dim(d.value));
        else if (!d.symbol.empty())
          s.push_back(sym_dim("in:" + d.symbol));
        else
          s.push_back(sym_dim(str_cat("in?", g_.values[static_cast<size_t>(id)].name, ":", i)));
      }
      set_shape(id, std::move(s));
    }
  }

  void visit(const ir::Node& n) {
    if (n.outputs.empty() || n.outputs[0] == ir::kNoValue) return;
    const int y = n.outputs[0];
    static const std::set<std::string> kSameShape = {"Relu",
                                                     "Clip",
                                                     "Sigmoid",
                                                     "Tanh",
                                                     "LeakyRelu",
                                                     "HardSigmoid",
                                                     "HardSwish",
                                                     "Erf",
                                                     "Sqrt",
                                                     "Exp",
                                                     "Log",
                                                     "Neg",
                                                     "Abs",
                                                     "Reciprocal",
                                                     "Identity",
                                                     "Dropout",
                                                     "Softmax",
                                                     "LogSoftmax",
                                                     "LayerNormalization",
                                                     "BatchNormalization",
                                                     "InstanceNormalization",
                                                     "Floor",
                                                     "Ceil",
                                                     "Round",
                                                     "Sign",
                                                     "Elu",
                                                     "Selu",
                                                     "Softplus",
                                                     "Not",
                                                     "Gelu",
                                                     "Attention",
                                                     "QuantizeLinear",
                                                     "DequantizeLinear",
                                                     "DynamicQuantizeLinear",
                                                     "QLinearAdd",
                                                     "Cast"};
    static const std::set<std::string> kBroadcast = {"Add",   "Sub",  "Mul",     "Div", "Pow",
                                                     "Equal", "Less", "Greater", "And", "Or",
                                                     "Where", "Max",  "Min",     "Sum", "PRelu"};
    const std::string& op = n.op_type;
    const bool onnx = n.domain.empty(), ours = n.domain == "com.osprey";
    if (n.domain == "com.microsoft") return microsoft(n, y);
    if (!onnx && !ours) return;
    if (onnx && op == "DynamicQuantizeLinear")  // y_scale and y_zero_point are scalars
      for (size_t i = 1; i < n.outputs.size() && i < 3; ++i)
        if (n.outputs[i] != ir::kNoValue) set_shape(n.outputs[i], {});
    if (ours && op == "Attention" && in(n, 1) == ir::kNoValue && in(n, 2) == ir::kNoValue) {
      // Q, K and V packed in input 0: Y has a third of its last dim.
      if (!known(in(n, 0)) || shape(in(n, 0)).size() != 3) return;
      SymShape s = shape(in(n, 0));
      s[2] = s[2].fixed() && s[2].value % 3 == 0 ? fixed_dim(s[2].value / 3) : SymDim{};
      set_shape(y, std::move(s));
    } else if (kSameShape.count(op)) {
      if (known(in(n, 0))) set_shape(y, shape(in(n, 0)));
      // Shape values keep their contents through Cast to int64, and to int32 (PaddlePaddle's
      // exports cast every shape to int32 and back): a dim does not reach 2^31, where the
      // model's own int32 arithmetic would break first.
      const int64_t to = attr_int(n, "to", 0);
      if (op == "Cast" && (to == static_cast<int64_t>(DType::kInt64) || to == static_cast<int64_t>(DType::kInt32)) &&
          has_contents(in(n, 0)))
        set_contents(y, contents(in(n, 0)));
      if (op == "Identity" && has_contents(in(n, 0))) set_contents(y, contents(in(n, 0)));
    } else if (onnx && kBroadcast.count(op)) {
      SymShape s;
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        if (!known(n.inputs[i])) return;
        s = i == 0 ? shape(n.inputs[0]) : broadcast_sym(s, shape(n.inputs[i]));
      }
      if (!n.inputs.empty()) set_shape(y, std::move(s));
    } else if (op == "Conv" || op == "FusedConv" || (onnx && op == "ConvInteger") || (ours && op == "ConvIntegerToFloat")) {
      conv(n, y, 1);
    } else if (op == "QLinearConv") {  // ONNX's and com.osprey's: W is input 3
      conv(n, y, 3);
    } else if ((onnx && (op == "MaxPool" || op == "AveragePool")) || (ours && op == "MaxPool")) {
      pool(n, y);
    } else if (onnx && (op == "GlobalAveragePool" || op == "GlobalMaxPool")) {
      if (!known(in(n, 0)) || shape(in(n, 0)).size() < 2) return;
      SymShape s = shape(in(n, 0));
      for (size_t i = 2; i < s.size(); ++i) s[i] = fixed_dim(1);
      set_shape(y, std::move(s));
    } else if (op == "MatMul" || op == "FusedMatMul") {
      matmul(n, y, ours);
    } else if ((onnx && op == "MatMulInteger") || (ours && op == "MatMulIntegerToFloat")) {
      matmul(n, y, false);
    } else if (onnx && op == "Gemm") {
      if (!known(in(n, 0)) || !known(in(n, 1))) return;
      const SymShape &a = shape(in(n, 0)), &b = shape(in(n, 1));
      if (a.size() != 2 || b.size() != 2) return;
      set_shape(y, {a[attr_int(n, "transA", 0) ? 1 : 0], b[attr_int(n, "transB", 0) ? 0 : 1]});
    } else if (onnx && op == "Transpose") {
      if (!known(in(n, 0))) return;
      const SymShape& a = shape(in(n, 0));
      std::vector<int64_t> perm;
      if (!attr_ints(n, "perm", &perm))
        for (size_t i = a.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
      if (perm.size() != a.size()) return;
      SymShape s;
      for (int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(a.size())) return;
        s.push_back(a[static_cast<size_t>(p)]);
      }
      set_shape(y, std::move(s));
    } else if (onnx && op == "Pad") {
      pad(n, y);
    } else if (onnx && op == "Reshape") {
      reshape(n, y);
    } else if (onnx && op == "Flatten") {
      flatten(n, y);
    } else if (onnx && (op == "Unsqueeze" || op == "Squeeze")) {
      squeeze(n, y, op == "Unsqueeze");
    } else if (onnx && op == "Concat") {
      concat(n, y);
    } else if (onnx && op == "Resize") {
      resize(n, y);
    } else if (onnx && op == "Shape") {
      shape_op(n, y);
    } else if (onnx && op == "Gather") {
      gather(n, y);
    } else if (onnx && op == "Slice") {
      slice(n, y);
    } else if (onnx && (op == "ReduceMean" || op == "ReduceSum")) {
      reduce(n, y);
    }
  }

 private:
  static int in(const ir::Node& n, size_t i) { return input_at(n, i); }
  bool known(int id) const { return id != ir::kNoValue && f_.has_shape[static_cast<size_t>(id)]; }
  bool has_contents(int id) const {
    return id != ir::kNoValue && f_.has_contents[static_cast<size_t>(id)];
  }
  const SymShape& shape(int id) const { return f_.shapes[static_cast<size_t>(id)]; }
  const SymShape& contents(int id) const { return f_.contents[static_cast<size_t>(id)]; }
  void set_shape(int id, SymShape s) {
    f_.has_shape[static_cast<size_t>(id)] = true;
    f_.shapes[static_cast<size_t>(id)] = std::move(s);
  }
  void set_contents(int id, SymShape c) {
    f_.has_contents[static_cast<size_t>(id)] = true;
    f_.contents[static_cast<size_t>(id)] = std::move(c);
  }
  // Constant int64 list input (opset-13 axes and the like), or the attribute `attr`.
  bool ints_input_or_attr(const ir::Node& n, size_t slot, const char* attr,
                          std::vector<int64_t>* out) const {
    const int id = in(n, slot);
    if (id != ir::kNoValue) {
      const Tensor* t = constant_tensor(g_, id);
      if (!t || t->dtype() != DType::kInt64 || t->rank() > 1) return false;
      out->assign(t->data<int64_t>(), t->data<int64_t>() + t->numel());
      return true;
    }
    return attr_ints(n, attr, out);
  }

  // Conv-like nodes: X is input 0, W input `wi`.
  void conv(const ir::Node& n, int y, size_t wi) {
    if (!known(in(n, 0)) || !known(in(n, wi))) return;
    const bool channels_last = n.domain == "com.osprey" && attr_int(n, "channels_last", 0) == 1;
    // channels_blocked = b: X [N, C/b, H, W, b] and Y [N, M/b, OH, OW, b].
    const int64_t block = n.op_type == "FusedConv" ? attr_int(n, "channels_blocked", 0) : 0;
    SymShape x = shape(in(n, 0));
    const SymShape& w = shape(in(n, wi));
    if (block > 0) {
      if (x.size() != 5 || w.size() != 4 || !x[4].fixed() || x[4].value != block) return;
      if (!w[0].fixed() || w[0].value % block != 0) return;
      x.pop_back();  // [N, C/b, H, W]: the channel count is not needed below
    }
    if (x.size() < 3 || w.size() != x.size()) return;
    if (channels_last) x.insert(x.begin() + 1, x.back()), x.pop_back();  // to [N, C, spatial...]
    const size_t nd = x.size() - 2;
    SymShape out = {x[0], w[0]};
    std::vector<int64_t> kernel, strides(nd, 1), dil(nd, 1), pads(2 * nd, 0);
    for (size_t i = 0; i < nd; ++i) {
      if (!w[i + 2].fixed()) return;
      kernel.push_back(w[i + 2].value);
    }
    if (!window_attrs(n, nd, &strides, &dil, &pads)) return;
    const std::string ap = attr_string(n, "auto_pad", "NOTSET");
    for (size_t i = 0; i < nd; ++i)
      out.push_back(window_sym_dim(x[i + 2], kernel[i], strides[i], dil[i], pads[i], pads[i + nd],
                                   ap, false));
    if (channels_last) out.push_back(out[1]), out.erase(out.begin() + 1);  // [N, spatial..., M]
    if (block > 0) out[1] = fixed_dim(w[0].value / block), out.push_back(fixed_dim(block));
    set_shape(y, std::move(out));
  }

  bool window_attrs(const ir::Node& n, size_t nd, std::vector<int64_t>* strides,
                    std::vector<int64_t>* dil, std::vector<int64_t>* pads) const {
    attr_ints(n, "strides", strides);
    attr_ints(n, "dilations", dil);
    attr_ints(n, "pads", pads);
    return strides->size() == nd && dil->size() == nd && pads->size() == 2 * nd;
  }

  void pool(const ir::Node& n, int y) {
    if (!known(in(n, 0)) || n.outputs.size() != 1) return;
    SymShape x = shape(in(n, 0));
    if (x.size() < 3) return;
    // com.osprey MaxPool with channels_last = 1 pools [N, spatial..., C].
    const bool channels_last = !n.domain.empty() && attr_int(n, "channels_last", 0) == 1;
    if (channels_last) x.insert(x.begin() + 1, x.back()), x.pop_back();  // to [N, C, spatial...]
    const size_t nd = x.size() - 2;
    std::vector<int64_t> kernel, strides(nd, 1), dil(nd, 1), pads(2 * nd, 0);
    if (!attr_ints(n, "kernel_shape", &kernel) || kernel.size() != nd) return;
    if (!window_attrs(n, nd, &strides, &dil, &pads)) return;
    const std::string ap = attr_string(n, "auto_pad", "NOTSET");
    const bool ceil_mode = attr_int(n, "ceil_mode", 0) != 0;
    SymShape out = {x[0], x[1]};
    for (size_t i = 0; i < nd; ++i)
      out.push_back(window_sym_dim(x[i + 2], kernel[i], strides[i], dil[i], pads[i], pads[i + nd],
                                   ap, ceil_mode));
    if (channels_last) out.push_back(out[1]), out.erase(out.begin() + 1);  // [N, spatial..., C]
    set_shape(y, std::move(out));
  }

  void matmul(const ir::Node& n, int y, bool fused) {
    if (!known(in(n, 0)) || !known(in(n, 1))) return;
    SymShape a = shape(in(n, 0)), b = shape(in(n, 1));
    if (a.empty() || b.empty()) return;
    if (fused) {
      if (b.size() != 2) return;
      a.back() = b[attr_int(n, "trans_b", 0) ? 0 : 1];
      set_shape(y, std::move(a));
      return;
    }
    const bool a1 = a.size() == 1, b1 = b.size() == 1;
    if (a1) a.insert(a.begin(), fixed_dim(1));
    if (b1) b.push_back(fixed_dim(1));
    SymShape out =
        broadcast_sym(SymShape(a.begin(), a.end() - 2), SymShape(b.begin(), b.end() - 2));
    if (!a1) out.push_back(a[a.size() - 2]);
    if (!b1) out.push_back(b.back());
    set_shape(y, std::move(out));
  }

  // onnxruntime's quantized ops of the QOperator format (kernels/reference/qoperator.cc).
  void microsoft(const ir::Node& n, int y) {
    const std::string& op = n.op_type;
    if (op == "QLinearAdd" || op == "QLinearMul") {
      if (known(in(n, 0)) && known(in(n, 3))) set_shape(y, broadcast_sym(shape(in(n, 0)), shape(in(n, 3))));
    } else if (op == "QLinearLeakyRelu" || op == "QLinearSigmoid" || op == "QLinearSoftmax") {
      if (known(in(n, 0))) set_shape(y, shape(in(n, 0)));
    } else if (op == "QLinearWhere") {
      if (known(in(n, 0)) && known(in(n, 1)) && known(in(n, 4)))
        set_shape(y, broadcast_sym(broadcast_sym(shape(in(n, 0)), shape(in(n, 1))), shape(in(n, 4))));
    } else if (op == "QLinearConcat") {  // (y_scale, y_zero_point, then X, scale, zero point per input)
      concat(n, y, 2, 3);
    } else if (op == "QLinearAveragePool") {
      pool(n, y);
    } else if (op == "QLinearGlobalAveragePool") {
      if (!known(in(n, 0)) || shape(in(n, 0)).size() < 3) return;
      SymShape s = shape(in(n, 0));
      const bool cl = attr_int(n, "channels_last", 0) != 0;
      for (size_t i = 1; i < s.size(); ++i)
        if (i != (cl ? s.size() - 1 : 1)) s[i] = fixed_dim(1);
      set_shape(y, std::move(s));
    } else if (op == "QGemm") {
      if (!known(in(n, 0)) || !known(in(n, 3))) return;
      const SymShape &a = shape(in(n, 0)), &b = shape(in(n, 3));
      if (a.size() != 2 || b.size() != 2) return;
      set_shape(y, {a[attr_int(n, "transA", 0) ? 1 : 0], b[attr_int(n, "transB", 0) ? 0 : 1]});
    }
  }

  // Pad with constant pads (input 1 from opset 11, the attribute before) and no axes: each dim
  // grows by its two pads (a symbolic dim padded becomes unknown; the rank stays known).
  void pad(const ir::Node& n, int y) {
    if (!known(in(n, 0)) || in(n, 3) != ir::kNoValue) return;
    std::vector<int64_t> pads;
    if (!ints_input_or_attr(n, 1, "pads", &pads)) return;
    SymShape s = shape(in(n, 0));
    if (pads.size() != 2 * s.size()) return;
    for (size_t i = 0; i < s.size(); ++i) {
      const int64_t grow = pads[i] + pads[i + s.size()];
      if (grow == 0) continue;
      s[i] = s[i].fixed() && s[i].value + grow >= 0 ? fixed_dim(s[i].value + grow) : SymDim{};
    }
    set_shape(y, std::move(s));
  }

  void reshape(const ir::Node& n, int y) {
    const int t = in(n, 1);
    if (!has_contents(t) || !known(t) || shape(t).size() != 1) return;
    const SymShape& target = contents(t);
    const bool allowzero = attr_int(n, "allowzero", 0) != 0;
    const bool x_known = known(in(n, 0));
    SymShape out;
    int infer = -1;
    for (size_t i = 0; i < target.size(); ++i) {
      const SymDim& d = target[i];
      if (d.fixed() && d.value == 0 && !allowzero) {
        if (!x_known || i >= shape(in(n, 0)).size()) return;
        out.push_back(shape(in(n, 0))[i]);
      } else if (is_infer_marker(d)) {
        if (infer >= 0) return;
        infer = static_cast<int>(i);
        out.push_back({});
      } else {
        out.push_back(d);
      }
    }
    if (infer >= 0 && x_known) {
      // The inferred size: X's elements over the other sizes, where each is a number once the
      // symbols both sides share are cancelled ([batch, 1280, 1, 1] to [batch, -1]: 1280).
      SymShape x = shape(in(n, 0));
      int64_t total = 1, rest = 1;
      for (size_t i = 0; i < out.size(); ++i) {
        if (static_cast<int>(i) == infer) continue;
        auto same = std::find(x.begin(), x.end(), out[i]);
        if (!out[i].fixed() && same != x.end()) {
          x.erase(same);
          continue;
        }
        rest = out[i].fixed() && rest >= 0 ? rest * out[i].value : -1;
      }
      for (const SymDim& d : x) total = d.fixed() && total >= 0 ? total * d.value : -1;
      if (total >= 0 && rest > 0 && total % rest == 0)
        out[static_cast<size_t>(infer)] = fixed_dim(total / rest);
    }
    set_shape(y, std::move(out));
  }

  void flatten(const ir::Node& n, int y) {
    if (!known(in(n, 0))) return;
    const SymShape& x = shape(in(n, 0));
    int64_t axis = attr_int(n, "axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(x.size());
    if (axis < 0 || axis > static_cast<int64_t>(x.size())) return;
    auto product = [](SymShape::const_iterator b, SymShape::const_iterator e) -> SymDim {
      if (e - b == 1) return *b;
      int64_t p = 1;
      for (auto it = b; it != e; ++it) {
        if (!it->fixed()) return {};
        p *= it->value;
      }
      return fixed_dim(p);
    };
    set_shape(y, {product(x.begin(), x.begin() + axis), product(x.begin() + axis, x.end())});
  }

  void squeeze(const ir::Node& n, int y, bool unsqueeze) {
    std::vector<int64_t> axes;
    if (!ints_input_or_attr(n, 1, "axes", &axes)) return;
    const int x = in(n, 0);
    if (!known(x)) return;
    SymShape s = shape(x);
    if (unsqueeze) {
      const int64_t r = static_cast<int64_t>(s.size() + axes.size());
      std::vector<bool> at(static_cast<size_t>(r), false);
      for (int64_t a : axes) {
        if (a < 0) a += r;
        if (a < 0 || a >= r || at[static_cast<size_t>(a)]) return;
        at[static_cast<size_t>(a)] = true;
      }
      SymShape out;
      size_t k = 0;
      for (int64_t i = 0; i < r; ++i)
        out.push_back(at[static_cast<size_t>(i)] ? fixed_dim(1) : s[k++]);
      set_shape(y, std::move(out));
    } else {
      if (axes.empty()) return;  // squeezes every 1: unknown for symbolic dims
      const int64_t r = static_cast<int64_t>(s.size());
      std::vector<bool> drop(s.size(), false);
      for (int64_t a : axes) {
        if (a < 0) a += r;
        if (a < 0 || a >= r) return;
        drop[static_cast<size_t>(a)] = true;
      }
      SymShape out;
      for (size_t i = 0; i < s.size(); ++i)
        if (!drop[i]) out.push_back(s[i]);
      set_shape(y, std::move(out));
    }
    if (has_contents(x)) set_contents(y, contents(x));
  }

  // Resize (opset 11 on: X, roi, scales, sizes): the input's rank. A dim is the constant size
  // (the "stretch" policy), the input's dim under a scale of 1, floor(dim * scale) of a fixed
  // dim, and unknown otherwise.
  void resize(const ir::Node& n, int y) {
    if (n.opset < 11 || !known(in(n, 0)) || n.find_attribute("axes")) return;
    const SymShape& a = shape(in(n, 0));
    SymShape s(a.size());
    const int sizes_id = in(n, 3), scales_id = in(n, 2);
    const Tensor* sizes = sizes_id == ir::kNoValue ? nullptr : constant_tensor(g_, sizes_id);
    const Tensor* scales = scales_id == ir::kNoValue ? nullptr : constant_tensor(g_, scales_id);
    const ir::Attribute* policy = n.find_attribute("keep_aspect_ratio_policy");
    const bool stretch = !policy || (policy->type == ir::Attribute::Type::kString && policy->s == "stretch");
    const auto rank = static_cast<int64_t>(a.size());
    if (sizes && sizes->numel() > 0) {
      if (sizes->dtype() != DType::kInt64 || sizes->numel() != rank || !stretch) {
        set_shape(y, std::move(s));
        return;
      }
      for (int64_t i = 0; i < rank; ++i) s[static_cast<size_t>(i)] = fixed_dim(sizes->data<int64_t>()[i]);
    } else if (scales && scales->dtype() == DType::kFloat32 && scales->numel() == rank) {
      for (int64_t i = 0; i < rank; ++i) {
        const auto u = static_cast<size_t>(i);
        const double sc = scales->data<float>()[i];
        if (sc == 1.0) s[u] = a[u];
        else if (a[u].fixed() && sc > 0) s[u] = fixed_dim(static_cast<int64_t>(std::floor(a[u].value * sc)));
      }
    }
    set_shape(y, std::move(s));
  }

  // Concat of the inputs first, first + step, ...
  void concat(const ir::Node& n, int y, size_t first = 0, size_t step = 1) {
    SymShape s, c;
    bool all_contents = true;
    const int64_t axis_attr = attr_int(n, "axis", 0);
    if (n.inputs.size() <= first) return;
    for (size_t i = first; i < n.inputs.size(); i += step) {
      const int v = n.inputs[i];
      if (!known(v)) return;
      const SymShape& vs = shape(v);
      const int64_t r = static_cast<int64_t>(vs.size());
      const int64_t axis = axis_attr < 0 ? axis_attr + r : axis_attr;
      if (axis < 0 || axis >= r) return;
      if (i == first) {
        s = vs;
      } else {
        if (vs.size() != s.size()) return;
        SymDim& d = s[static_cast<size_t>(axis)];
        const SymDim& e = vs[static_cast<size_t>(axis)];
        d = d.fixed() && e.fixed() ? fixed_dim(d.value + e.value) : SymDim{};
      }
      if (first == 0 && has_contents(v) && r == 1) {  // (a QLinearConcat re-quantizes)
        const SymShape& vc = contents(v);
        c.insert(c.end(), vc.begin(), vc.end());
      } else {
        all_contents = false;
      }
    }
    set_shape(y, std::move(s));
    if (all_contents) set_contents(y, std::move(c));
  }

  void shape_op(const ir::Node& n, int y) {
    if (!known(in(n, 0))) return;
    const SymShape& x = shape(in(n, 0));
    const int64_t r = static_cast<int64_t>(x.size());
    int64_t start = attr_int(n, "start", 0), end = attr_int(n, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, start, r);
    set_contents(y, SymShape(x.begin() + start, x.begin() + end));
    set_shape(y, {fixed_dim(end - start)});
  }

  void gather(const ir::Node& n, int y) {
    const int data = in(n, 0), idx = in(n, 1);
    if (!known(data) || !known(idx)) return;
    const SymShape& ds = shape(data);
    const int64_t r = static_cast<int64_t>(ds.size());
    int64_t axis = attr_int(n, "axis", 0);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r) return;
    SymShape out(ds.begin(), ds.begin() + axis);
    for (const SymDim& d : shape(idx)) out.push_back(d);
    out.insert(out.end(), ds.begin() + axis + 1, ds.end());
    set_shape(y, std::move(out));
    const Tensor* it = constant_tensor(g_, idx);
    if (!has_contents(data) || r != 1 || !it || it->dtype() != DType::kInt64 || it->rank() > 1)
      return;
    const SymShape& c = contents(data);
    const int64_t len = static_cast<int64_t>(c.size());
    SymShape picked;
    for (int64_t i = 0; i < it->numel(); ++i) {
      int64_t k = it->data<int64_t>()[i];
      if (k < 0) k += len;
      if (k < 0 || k >= len) return;
      picked.push_back(c[static_cast<size_t>(k)]);
    }
    set_contents(y, std::move(picked));
  }

  // Contents only: a 1-D int64 value sliced on axis 0 with step 1.
  void slice(const ir::Node& n, int y) {
    const int data = in(n, 0);
    if (!has_contents(data)) return slice_shape(n, y);
    if (!known(data) || shape(data).size() != 1) return;
    std::vector<int64_t> starts, ends, axes = {0}, steps = {1};
    if (!ints_input_or_attr(n, 1, "starts", &starts) || !ints_input_or_attr(n, 2, "ends", &ends))
      return;
    if (in(n, 3) != ir::kNoValue && !ints_input_or_attr(n, 3, "axes", &axes)) return;
    if (in(n, 4) != ir::kNoValue && !ints_input_or_attr(n, 4, "steps", &steps)) return;
    if (starts.size() != 1 || ends.size() != 1 || axes.size() != 1 || steps.size() != 1 ||
        (axes[0] != 0 && axes[0] != -1) || steps[0] != 1)
      return;
    const SymShape& c = contents(data);
    const int64_t len = static_cast<int64_t>(c.size());
    int64_t b = starts[0] < 0 ? starts[0] + len : starts[0];
    int64_t e = ends[0] < 0 ? ends[0] + len : ends[0];
    b = std::clamp<int64_t>(b, 0, len);
    e = std::clamp<int64_t>(e, b, len);
    set_contents(y, SymShape(c.begin() + b, c.begin() + e));
    set_shape(y, {fixed_dim(e - b)});
  }

  // Shape of Slice (opset >= 10) with constant starts/axes/steps and ends either constant or
  // a symbol S starting at 0 over a fixed dim D > 1: that dim is min(S, D), which
  // broadcast_sym knows equals S wherever it meets S in a run that succeeds.
  void slice_shape(const ir::Node& n, int y) {
    const int data = in(n, 0);
    if (!known(data) || n.opset < 10 || in(n, 1) == ir::kNoValue || in(n, 2) == ir::kNoValue)
      return;
    SymShape out = shape(data);
    const int64_t r = static_cast<int64_t>(out.size());
    std::vector<int64_t> starts, axes, steps;
    const int e = in(n, 2);
    if (!ints_input_or_attr(n, 1, "starts", &starts) || !has_contents(e)) return;
    const SymShape& ends = contents(e);
    if (in(n, 3) == ir::kNoValue) {
      for (int64_t i = 0; i < static_cast<int64_t>(starts.size()); ++i) axes.push_back(i);
    } else if (!ints_input_or_attr(n, 3, "axes", &axes)) {
      return;
    }
    if (in(n, 4) != ir::kNoValue && !ints_input_or_attr(n, 4, "steps", &steps)) return;
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size())
      return;
    for (size_t i = 0; i < starts.size(); ++i) {
      const int64_t axis = axes[i] < 0 ? axes[i] + r : axes[i];
      if (axis < 0 || axis >= r) return;
      SymDim& d = out[static_cast<size_t>(axis)];
      const SymDim& end = ends[i];
      if (steps[i] != 1 || !d.fixed()) {
        d = {};
      } else if (end.fixed()) {
        const int64_t len = d.value;
        int64_t b = starts[i] < 0 ? starts[i] + len : starts[i];
        int64_t x = end.value < 0 ? end.value + len : end.value;
        b = std::clamp<int64_t>(b, 0, len);
        x = std::clamp<int64_t>(x, b, len);
        d = fixed_dim(x - b);
      } else if (!end.sym.empty() && starts[i] == 0 && d.value > 1) {
        d = sym_dim(str_cat("min(", end.sym, ",", d.value, ")"));
      } else {
        d = {};
      }
    }
    set_shape(y, std::move(out));
  }

  void reduce(const ir::Node& n, int y) {
    std::vector<int64_t> axes;
    if (!known(in(n, 0)) || !ints_input_or_attr(n, 1, "axes", &axes) || axes.empty()) return;
    const SymShape& x = shape(in(n, 0));
    const int64_t r = static_cast<int64_t>(x.size());
    std::vector<bool> red(x.size(), false);
    for (int64_t a : axes) {
      if (a < 0) a += r;
      if (a < 0 || a >= r) return;
      red[static_cast<size_t>(a)] = true;
    }
    const bool keep = attr_int(n, "keepdims", 1) != 0;
    SymShape out;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!red[i])
        out.push_back(x[i]);
      else if (keep)
        out.push_back(fixed_dim(1));
    }
    set_shape(y, std::move(out));
  }

  const ir::Graph& g_;
  ShapeFacts& f_;
};

}  // namespace

ShapeFacts infer_shapes(const ir::Graph& g, bool in_subgraph) {
  ShapeFacts f;
  const size_t n = g.values.size();
  f.has_shape.assign(n, false);
  f.shapes.assign(n, {});
  f.has_contents.assign(n, false);
  f.contents.assign(n, {});
  Inference inf(g, f);
  inf.seed(in_subgraph);
  for (const auto& node : g.nodes) inf.visit(node);  // topological order
  return f;
}

}  // namespace osprey::passes
