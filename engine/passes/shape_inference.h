// Static shape facts for the passes (not a pass itself): what can be known about each value's
// shape, and about the contents of small int64 tensors that hold shapes, before the graph runs.
//
// A dim is a fixed size, a symbol, or unknown. Symbols come from the main graph's declared
// inputs (the session checks that a named symbol has one size across all inputs; an unnamed
// dynamic dim gets a symbol of its own), and from computations on symbols: a Conv over a
// symbolic spatial size gets a symbol naming that computation, so two values computed the same
// way from the same symbols compare equal. Nothing symbolic is ever turned into a number.
//
// Shapes propagate through element-wise ops (broadcasting), Conv/pools, MatMul/Gemm, the fused
// com.osprey ops, Transpose, Reshape, Flatten, (Un)Squeeze, Concat, Gather and Shape; contents
// through Shape, Gather, Slice, Concat, (Un)Squeeze and Cast on int64 values (a literal -1 as
// infer_marker()).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace osprey::passes {

struct SymDim {
  int64_t value = -1;  // >= 0: fixed
  std::string sym;     // non-empty: symbolic; both unset: unknown
  bool fixed() const { return value >= 0; }
  bool known() const { return value >= 0 || !sym.empty(); }
  bool operator==(const SymDim& o) const { return known() && value == o.value && sym == o.sym; }
};
using SymShape = std::vector<SymDim>;

// A literal -1 in a shape tensor's contents (Reshape's "infer this dim"): a symbol of its own,
// so that no size arithmetic takes it for a number and it survives Concat and Gather.
inline SymDim infer_marker() { return SymDim{-1, "-1"}; }
inline bool is_infer_marker(const SymDim& d) { return d.value < 0 && d.sym == "-1"; }

struct ShapeFacts {
  std::vector<bool> has_shape;     // rank known (dims may still be unknown)
  std::vector<SymShape> shapes;    // by value id
  std::vector<bool> has_contents;  // int64 tensor of rank <= 1 with known contents
  std::vector<SymShape> contents;  // its elements (may be symbolic)
  // True when both shapes are known to be equal, dim by dim.
  bool same_shape(int a, int b) const;
  // The fixed dims of `id`, when all are fixed.
  bool fixed_shape(int id, std::vector<int64_t>* dims) const;
};

// Dim arithmetic (shape_dims.cc). A broadcast dim is the common dim, the dim against a 1, or a
// fixed size > 1 against anything (the only size a successful run can have); else unknown.
SymShape broadcast_sym(const SymShape& a, const SymShape& b);
// Output size of a sliding window (Conv, pools) over one spatial dim; symbolic inputs give a
// symbol naming the computation.
SymDim window_sym_dim(const SymDim& in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                      const std::string& auto_pad, bool ceil_mode);

// In a subgraph the declared input types are not trusted: its inputs start unknown.
ShapeFacts infer_shapes(const ir::Graph& g, bool in_subgraph);

}  // namespace osprey::passes
