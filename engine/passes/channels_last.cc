// channels_last (level 2): 2-D float32 convolutions run channels-last (NHWC), and so do the
// element-wise ops between them, with a Transpose only where a value crosses from an NCHW
// producer into the channels-last region or back out to an NCHW reader.
//
// Why: oneDNN's fast convolutions (brgconv, the depthwise brdgmm) take nhwc as it is, while an
// NCHW tensor must be reordered into a blocked layout before every convolution and back after
// it. On a chain of convolutions (MobileNet, EfficientNet, ResNet) those reorders cost as much
// as the depthwise convolutions themselves; in channels-last they disappear.
//
// What moves to channels-last:
//   - Conv and com.osprey FusedConv whose X has a known rank of 4 and is float32 (and whose
//     residual Z, if any, is proven to have Y's shape): they become
//     FusedConv with channels_last = 1 (X, Z and Y are [N, H, W, C]; W is unchanged);
//     likewise com.osprey QLinearConv (int8, from qdq_conv_fusion) and ConvIntegerToFloat (a
//     dynamically quantized convolution, from matmul_integer_fusion) over a uint8 / int8 X;
//   - Relu, Clip, Sigmoid, Tanh, LeakyRelu, HardSigmoid, HardSwish, Elu, Softplus whose input
//     is channels-last (layout does not matter to them), and so QuantizeLinear and
//     DequantizeLinear with one scale and zero point (a QDQ-quantized model's pairs between
//     convolutions; per-axis parameters name an NCHW axis and stay), and DynamicQuantizeLinear
//     (its quantized output; the scale and zero point it computes do not depend on layout);
//   - com.osprey QLinearAdd (qdq_add_fusion) whose two inputs are channels-last;
//   - Add, Sub, Mul, Div whose two inputs are both channels-last (both of rank 4: permuting
//     both shapes alike keeps the broadcast, e.g. a squeeze-excite scale [N, C, 1, 1] times
//     its [N, C, H, W] feature map), or whose other input is a constant holding one value
//     (rank <= 4);
//   - a 2-D MaxPool of a channels-last value (Y only, no ceil_mode or dilation, pads below the
//     kernel size) becomes com.osprey MaxPool with channels_last = 1 (oneDNN pools nhwc);
//   - GlobalAveragePool of a channels-last value becomes ReduceMean over axes 1, 2 (keepdims):
//     its [N, 1, 1, C] result is the pooled value's channels-last twin (a squeeze-excite branch
//     goes on in channels-last), transposed to [N, C, 1, 1] only for readers that need NCHW;
//   - Resize (opset 11 on) of a channels-last value whose scales or sizes are a constant of 4
//     values (not tf_crop_and_resize, no axes, the stretch policy): the same Resize with them
//     permuted into a new constant (an FPN's upsampling);
//   - Concat along the channels (axis 1) of channels-last values: along axis 3.
// Every value keeps its name and its NCHW meaning for the rest of the graph: its channels-last
// twin is a new value "<name>_nhwc"; a Transpose back to the original name is added only when
// something still reads the NCHW form (an unconverted node, a subgraph, a graph output), and a
// Transpose into channels-last only once per NCHW value that converted nodes read.
// The main graph only (subgraphs keep NCHW).
#include <algorithm>
#include <cstring>
#include <set>

#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

const std::vector<int64_t> kToLast = {0, 2, 3, 1};
const std::vector<int64_t> kToFirst = {0, 3, 1, 2};

bool rank4(const GraphIndex& ix, int v) {
  const auto u = static_cast<size_t>(v);
  return v >= 0 && ix.facts.has_shape[u] && ix.facts.shapes[u].size() == 4;
}

bool conv_candidate(const ir::Node& n, const GraphIndex& ix) {
  const bool conv = is_op(n, "Conv") ||
                    (n.domain == kOspreyDomain && n.op_type == "FusedConv" &&
                     !n.find_attribute("channels_last"));
  if (!conv || n.outputs.size() != 1 || n.outputs[0] == ir::kNoValue || n.inputs.size() < 2) return false;
  if (n.op_type == "Conv" && n.inputs.size() > 3) return false;
  // A residual Z must be proven to have Y's shape (else the kernel's error about it would
  // name the transposed shapes).
  const int z = input_at(n, 3);
  if (z != ir::kNoValue && !ix.facts.same_shape(z, n.outputs[0])) return false;
  return rank4(ix, n.inputs[0]) && ix.dtype(n.inputs[0]) == DType::kFloat32;
}

// A com.osprey QLinearConv (qdq_conv_fusion) or ConvIntegerToFloat (matmul_integer_fusion) over
// a rank-4 uint8 / int8 X, not yet converted.
bool qconv_candidate(const ir::Node& n, const GraphIndex& ix) {
  if (n.domain != kOspreyDomain || (n.op_type != "QLinearConv" && n.op_type != "ConvIntegerToFloat") ||
      n.find_attribute("channels_last") ||
      n.outputs.size() != 1 || n.outputs[0] == ir::kNoValue || n.inputs.empty() || n.inputs[0] < 0)
    return false;
  const DType t = ix.dtype(n.inputs[0]);
  return rank4(ix, n.inputs[0]) && (t == DType::kUInt8 || t == DType::kInt8);
}

// A com.osprey QLinearAdd (qdq_add_fusion): element-wise over two inputs of one shape (0, 3).
bool qadd(const ir::Node& n) {
  return n.domain == kOspreyDomain && n.op_type == "QLinearAdd" && n.inputs.size() == 8 && n.inputs[0] >= 0 &&
         n.inputs[3] >= 0 && n.outputs.size() == 1 && n.outputs[0] >= 0;
}

bool layout_free_unary(const ir::Node& n) {
  static const std::set<std::string> ops = {"Relu", "Clip", "Sigmoid", "Tanh", "LeakyRelu",
                                            "HardSigmoid", "HardSwish", "Elu", "Softplus"};
  return n.domain.empty() && ops.count(n.op_type) && !n.inputs.empty() && n.inputs[0] >= 0 &&
         n.outputs.size() == 1 && n.outputs[0] >= 0;
}

// DynamicQuantizeLinear(x) -> (y, y_scale, y_zero_point): y element by element, the other two
// scalars computed over all of x, whatever its layout.
bool dynamic_quantization(const ir::Node& n) {
  return is_op(n, "DynamicQuantizeLinear") && n.inputs.size() == 1 && n.inputs[0] >= 0 && !n.outputs.empty() &&
         n.outputs[0] >= 0;
}

// A constant holding one value, of rank <= 4: broadcasting it against an NHWC value is the same
// as against the NCHW one (x + 3, x / 6 in a decomposed HardSwish).
bool single_value(const ir::Graph& g, int v) {
  const Tensor* t = constant_tensor(g, v);
  return t && t->numel() == 1 && t->rank() <= 4;
}

// The element type a converted node's output has: QuantizeLinear's is its zero point's (uint8
// without one), DequantizeLinear's float32, the others' their first input's.
DType converted_output_dtype(const ir::Graph& g, const GraphIndex& ix, const ir::Node& n) {
  if (is_op(n, "QuantizeLinear")) {
    const int zp = input_at(n, 2);
    return zp == ir::kNoValue ? DType::kUInt8 : constant_tensor(g, zp)->dtype();
  }
  if (is_op(n, "DequantizeLinear") || (n.domain == kOspreyDomain && n.op_type == "ConvIntegerToFloat"))
    return DType::kFloat32;
  if (is_op(n, "DynamicQuantizeLinear")) return DType::kUInt8;
  if (n.domain == kOspreyDomain && (n.op_type == "QLinearConv" || n.op_type == "QLinearAdd")) {
    const Tensor* zp = constant_tensor(g, input_at(n, 7));
    return zp ? zp->dtype() : DType::kUInt8;
  }
  const DType d = n.inputs.empty() || n.inputs[0] < 0 ? DType::kUndefined : ix.dtype(n.inputs[0]);
  return d == DType::kUndefined ? DType::kFloat32 : d;
}

bool layout_free_binary(const ir::Node& n) {
  static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div"};
  return n.domain.empty() && ops.count(n.op_type) && n.inputs.size() == 2 && n.inputs[0] >= 0 &&
         n.inputs[1] >= 0 && n.outputs.size() == 1 && n.outputs[0] >= 0;
}

enum class Kind { kNone, kConv, kUnary, kBinary, kScalarBinary, kPool, kMaxPool, kResize, kConcat, kQAdd };

// Resize's scales (slot 2) or sizes (slot 3), whichever is given as a constant of 4 values;
// -1 when the node is not one the pass converts.
int resize_table_slot(const ir::Graph& g, const ir::Node& n) {
  if (!is_op(n, "Resize") || n.opset < 11 || n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1 ||
      n.outputs[0] < 0 || n.find_attribute("axes"))
    return -1;
  auto str_of = [&](const char* name, const char* def) {
    const ir::Attribute* a = n.find_attribute(name);
    return a ? (a->type == ir::Attribute::Type::kString ? a->s : std::string("?")) : std::string(def);
  };
  if (str_of("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize" ||
      str_of("keep_aspect_ratio_policy", "stretch") != "stretch")
    return -1;
  int slot = -1;
  for (int i : {2, 3}) {
    const int v = input_at(n, static_cast<size_t>(i));
    if (v == ir::kNoValue) continue;
    const Tensor* t = constant_tensor(g, v);
    if (!t) return -1;
    if (t->numel() == 0) continue;  // an empty placeholder
    const DType want = i == 2 ? DType::kFloat32 : DType::kInt64;
    if (slot >= 0 || t->dtype() != want || t->rank() != 1 || t->numel() != 4) return -1;
    slot = i;
  }
  return slot;
}

// Concat along the channels of rank-4 values (axis 1 or -3), every input present.
bool channel_concat(const ir::Node& n) {
  if (!is_op(n, "Concat") || n.inputs.empty() || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  for (int v : n.inputs)
    if (v < 0) return false;
  const ir::Attribute* a = n.find_attribute("axis");
  return a && a->type == ir::Attribute::Type::kInt && (a->i == 1 || a->i == -3);
}

// A 2-D MaxPool the channels-last com.osprey MaxPool computes the same way: Y only (no
// Indices), row-major storage, no ceil_mode, no dilation, explicit pads below the kernel size
// (so every window holds an input value).
bool max_pool_candidate(const ir::Node& n) {
  if (!is_op(n, "MaxPool") || n.inputs.size() != 1 || n.inputs[0] < 0 || n.outputs.empty() ||
      n.outputs[0] < 0)
    return false;
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] != ir::kNoValue) return false;
  auto int_of = [&](const char* name, int64_t def) {
    const ir::Attribute* a = n.find_attribute(name);
    return a && a->type == ir::Attribute::Type::kInt ? a->i : (a ? -1 : def);
  };
  auto ints_of = [&](const char* name) {
    const ir::Attribute* a = n.find_attribute(name);
    return a && a->type == ir::Attribute::Type::kInts ? a->ints : std::vector<int64_t>{};
  };
  if (int_of("ceil_mode", 0) != 0 || int_of("storage_order", 0) != 0) return false;
  const std::vector<int64_t> k = ints_of("kernel_shape");
  if (k.size() != 2) return false;
  for (int64_t d : ints_of("dilations"))
    if (d != 1) return false;
  const std::vector<int64_t> pads = ints_of("pads");
  if (!pads.empty() && pads.size() != 4) return false;
  for (size_t i = 0; i < pads.size(); ++i)
    if (pads[i] < 0 || pads[i] >= k[i % 2]) return false;
  return true;
}

class ChannelsLast final : public Pass {
 public:
  const char* name() const override { return "channels_last"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    if (ctx.in_subgraph) return false;
    GraphIndex ix(g, false);
    opset_ = default_opset(g);
    // Decide, in topological order, which nodes run channels-last.
    std::vector<Kind> kind(g.nodes.size(), Kind::kNone);
    std::vector<bool> held(g.values.size(), false);  // produced channels-last
    bool any_conv = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ir::Node& n = g.nodes[i];
      Kind k = Kind::kNone;
      if (conv_candidate(n, ix) || qconv_candidate(n, ix)) {
        k = Kind::kConv;
        any_conv = true;
      } else if ((layout_free_unary(n) || per_tensor_quantization(g, n) || dynamic_quantization(n)) &&
                 held[static_cast<size_t>(n.inputs[0])]) {
        k = Kind::kUnary;
      } else if (qadd(n) && held[static_cast<size_t>(n.inputs[0])] && held[static_cast<size_t>(n.inputs[3])] &&
                 rank4(ix, n.inputs[0]) && rank4(ix, n.inputs[3])) {
        k = Kind::kQAdd;
      } else if (layout_free_binary(n) && held[static_cast<size_t>(n.inputs[0])] && held[static_cast<size_t>(n.inputs[1])] &&
                 rank4(ix, n.inputs[0]) && rank4(ix, n.inputs[1])) {
        k = Kind::kBinary;
      } else if (layout_free_binary(n) &&
                 ((held[static_cast<size_t>(n.inputs[0])] && single_value(g, n.inputs[1])) ||
                  (held[static_cast<size_t>(n.inputs[1])] && single_value(g, n.inputs[0])))) {
        k = Kind::kScalarBinary;
      } else if (is_op(n, "GlobalAveragePool") && n.inputs.size() == 1 && n.outputs.size() == 1 &&
                 n.inputs[0] >= 0 && n.outputs[0] >= 0 && held[static_cast<size_t>(n.inputs[0])]) {
        k = Kind::kPool;
      } else if (max_pool_candidate(n) && held[static_cast<size_t>(n.inputs[0])]) {
        k = Kind::kMaxPool;
      } else if (resize_table_slot(g, n) >= 0 && held[static_cast<size_t>(n.inputs[0])] && rank4(ix, n.inputs[0])) {
        k = Kind::kResize;
      } else if (channel_concat(n) && std::all_of(n.inputs.begin(), n.inputs.end(), [&](int v) {
                   return held[static_cast<size_t>(v)] && rank4(ix, v);
                 })) {
        k = Kind::kConcat;
      }
      kind[i] = k;
      if (k != Kind::kNone) held[static_cast<size_t>(n.outputs[0])] = true;
    }
    if (!any_conv) return false;

    twin_.assign(g.values.size(), ir::kNoValue);
    // Element types, read before the graph changes: of each value, and of each converted
    // node's output.
    dtypes_.assign(g.values.size(), DType::kUndefined);
    for (size_t v = 0; v < g.values.size(); ++v) dtypes_[v] = ix.dtype(static_cast<int>(v));
    std::vector<DType> out_dtype(g.nodes.size(), DType::kFloat32);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (kind[i] != Kind::kNone) out_dtype[i] = converted_output_dtype(g, ix, g.nodes[i]);
    added_.clear();
    const size_t original_nodes = g.nodes.size();
    for (size_t i = 0; i < original_nodes; ++i) {
      if (kind[i] == Kind::kNone) continue;
      ir::Node& n = g.nodes[i];
      // Inputs: the channels-last twins.
      if (kind[i] == Kind::kConv && (n.op_type == "QLinearConv" || n.op_type == "ConvIntegerToFloat")) {
        n.attributes["channels_last"] = int_attribute(1);
        n.inputs[0] = twin_of(g, n.inputs[0]);
      } else if (kind[i] == Kind::kConv) {
        if (n.op_type == "Conv") make_fused(n, "FusedConv", 4);
        n.attributes["channels_last"] = int_attribute(1);
        n.inputs[0] = twin_of(g, n.inputs[0]);
        if (n.inputs[3] != ir::kNoValue) n.inputs[3] = twin_of(g, n.inputs[3]);
      } else if (kind[i] == Kind::kUnary) {
        n.inputs[0] = twin_of(g, n.inputs[0]);
      } else if (kind[i] == Kind::kQAdd) {
        n.inputs[0] = twin_of(g, n.inputs[0]);
        n.inputs[3] = twin_of(g, n.inputs[3]);
      } else if (kind[i] == Kind::kMaxPool) {
        n.inputs[0] = twin_of(g, n.inputs[0]);
        n.domain = kOspreyDomain;
        n.opset = 1;
        n.kernel = nullptr;
        n.attributes.erase("storage_order");
        n.attributes["channels_last"] = int_attribute(1);
        n.outputs.resize(1);
      } else if (kind[i] == Kind::kResize) {
        const int slot = resize_table_slot(g, n);
        n.inputs[0] = twin_of(g, n.inputs[0]);
        n.inputs[static_cast<size_t>(slot)] = permuted_table(g, n.inputs[static_cast<size_t>(slot)]);
      } else if (kind[i] == Kind::kConcat) {
        for (int& in : n.inputs) in = twin_of(g, in);
        n.attributes["axis"] = int_attribute(3);
      } else if (kind[i] == Kind::kScalarBinary) {
        for (int& in : n.inputs)
          if (!single_value(g, in)) in = twin_of(g, in);
      } else {  // binary or pool: every input is held
        for (int& in : n.inputs) in = twin_of(g, in);
      }
      if (kind[i] == Kind::kPool) {
        const int y = n.outputs[0];
        const int r = add_unique_value(g, g.values[static_cast<size_t>(y)].name + "_nhwc", float_tensor_type());
        n.op_type = "ReduceMean";
        n.opset = 13;  // the last ReduceMean with `axes` as an attribute (an input from 18)
        n.kernel = nullptr;
        n.attributes.clear();
        n.attributes["axes"] = ints_attribute({1, 2});
        n.attributes["keepdims"] = int_attribute(1);
        n.outputs[0] = r;
        twin_[static_cast<size_t>(y)] = r;
        if (needs_nchw(ix, kind, y)) add_transpose(r, y, kToFirst, n.name);
        continue;
      }
      // Output: produced channels-last under a new name; the NCHW name comes back through a
      // Transpose only if something still reads it.
      const int y = n.outputs[0];
      const int t = add_unique_value(g, g.values[static_cast<size_t>(y)].name + "_nhwc",
                                     tensor_type(out_dtype[i]));
      n.outputs[0] = t;
      twin_[static_cast<size_t>(y)] = t;
      if (needs_nchw(ix, kind, y)) add_transpose(t, y, kToFirst, n.name);
    }
    for (auto& n : added_) g.nodes.push_back(std::move(n));
    return true;
  }

 private:
  // True when some reader of `y` (a value about to be produced channels-last) needs NCHW.
  static bool needs_nchw(const GraphIndex& ix, const std::vector<Kind>& kind, int y) {
    const auto u = static_cast<size_t>(y);
    if (ix.uses.output[u] || ix.uses.captured[u]) return true;
    for (int r : ix.readers[u])
      if (kind[static_cast<size_t>(r)] == Kind::kNone) return true;
    return false;
  }

  // The channels-last twin of `v`: the value a converted producer writes, or one Transpose of
  // an NCHW value (made once, shared by every converted reader).
  int twin_of(ir::Graph& g, int v) {
    const auto u = static_cast<size_t>(v);
    if (twin_[u] != ir::kNoValue) return twin_[u];
    const std::string name = g.values[u].name;
    const DType d = dtypes_[u];
    const int made = add_unique_value(g, name + "_nhwc", tensor_type(d == DType::kUndefined ? DType::kFloat32 : d));
    twin_[u] = made;
    add_transpose(v, made, kToLast, name);
    return made;
  }

  // A new constant: the 4 values of constant `v` (Resize's scales or sizes, NCHW order) in
  // NHWC order.
  static int permuted_table(ir::Graph& g, int v) {
    const Tensor& t = *constant_tensor(g, v);
    Tensor p(t.dtype(), t.shape());
    const size_t el = t.dtype() == DType::kInt64 ? sizeof(int64_t) : sizeof(float);
    for (size_t i = 0; i < 4; ++i)
      std::memcpy(static_cast<char*>(p.raw_data()) + i * el,
                  static_cast<const char*>(t.raw_data()) + static_cast<size_t>(kToLast[i]) * el, el);
    const int id = add_unique_value(g, g.values[static_cast<size_t>(v)].name + "_nhwc", tensor_value_type(p));
    g.initializers[id] = std::move(p);
    return id;
  }

  void add_transpose(int from, int to, const std::vector<int64_t>& perm, const std::string& near) {
    ir::Node t;
    t.name = near + (perm == kToLast ? "/to_nhwc" : "/to_nchw");
    t.op_type = "Transpose";
    t.opset = opset_;
    t.inputs = {from};
    t.outputs = {to};
    t.attributes["perm"] = ints_attribute(perm);
    added_.push_back(std::move(t));
  }

  int opset_ = 13;
  std::vector<DType> dtypes_;  // value id -> element type (kUndefined: unknown)
  std::vector<int> twin_;  // value id -> its channels-last twin
  std::vector<ir::Node> added_;
};

}  // namespace

std::unique_ptr<Pass> make_channels_last() {
  return std::make_unique<ChannelsLast>();
}

}  // namespace osprey::passes
