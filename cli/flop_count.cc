#include "flop_count.h"

namespace osprey::cli {
namespace {

double numel(const Shape& s) {
  double n = 1;
  for (int64_t d : s) n *= static_cast<double>(d);
  return n;
}

const Shape* shape_at(const std::vector<Shape>& shapes, size_t i) {
  return i < shapes.size() ? &shapes[i] : nullptr;
}

bool onnx_domain(const std::string& d) {
  return d.empty() || d == "ai.onnx";
}

enum class Kind { kNone, kConv, kConvTranspose, kGemm, kMatMul, kAttention };

Kind kind_of(const NodeTiming& n) {
  if (onnx_domain(n.domain)) {
    if (n.op_type == "Conv") return Kind::kConv;
    if (n.op_type == "ConvTranspose") return Kind::kConvTranspose;
    if (n.op_type == "Gemm") return Kind::kGemm;
    if (n.op_type == "MatMul") return Kind::kMatMul;
  } else if (n.domain == "com.osprey") {
    if (n.op_type == "FusedConv") return Kind::kConv;
    if (n.op_type == "FusedMatMul") return Kind::kMatMul;
    if (n.op_type == "Attention") return Kind::kAttention;
  }
  return Kind::kNone;
}

}  // namespace

NodeFlops count_node_flops(const NodeTiming& n) {
  const Kind kind = kind_of(n);
  if (kind == Kind::kNone) return {};
  const NodeFlops unknown{FlopStatus::kShapesUnknown, 0};
  const Shape* x = shape_at(n.input_shapes, 0);
  const Shape* w = shape_at(n.input_shapes, 1);
  const Shape* y = shape_at(n.output_shapes, 0);
  if (!x || !w || !y || x->empty()) return unknown;
  if (y->empty() && kind != Kind::kMatMul) return unknown;  // only MatMul has a scalar result
  switch (kind) {
    case Kind::kConv:
      if (w->size() < 3 || (*w)[0] <= 0) return unknown;
      return {FlopStatus::kCounted, 2 * numel(*y) * numel(*w) / static_cast<double>((*w)[0])};
    case Kind::kConvTranspose:
      if (w->size() < 3 || (*w)[0] <= 0) return unknown;
      return {FlopStatus::kCounted, 2 * numel(*x) * numel(*w) / static_cast<double>((*w)[0])};
    case Kind::kGemm:
      if (y->size() != 2) return unknown;
      if ((*y)[0] <= 0) return {FlopStatus::kCounted, 0};
      return {FlopStatus::kCounted, 2 * numel(*y) * numel(*x) / static_cast<double>((*y)[0])};
    case Kind::kMatMul:
      return {FlopStatus::kCounted, 2 * numel(*y) * static_cast<double>(x->back())};
    case Kind::kAttention: {  // Y [B,Sq,H*D], K [B,Sk,H*D]: Q·Kᵀ and P·V, B·H·Sq·Sk·D MACs each
      // K absent (an empty shape): Q, K and V packed in input 0, so Sk = Sq.
      const Shape* k = w->empty() ? x : w;
      if (x->size() != 3 || k->size() != 3 || y->size() != 3) return unknown;
      return {FlopStatus::kCounted, 4 * numel(*y) * static_cast<double>((*k)[1])};
    }
    case Kind::kNone: break;
  }
  return {};
}

GraphFlops count_flops(const std::vector<NodeTiming>& nodes) {
  GraphFlops g;
  for (const auto& n : nodes) {
    const NodeFlops f = count_node_flops(n);
    if (f.status == FlopStatus::kCounted) g.flops += f.flops * static_cast<double>(n.runs), ++g.counted_nodes;
    if (f.status == FlopStatus::kShapesUnknown) ++g.unknown_nodes;
  }
  return g;
}

}  // namespace osprey::cli
