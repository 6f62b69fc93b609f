// Dim arithmetic of shape_inference.h: broadcasting and sliding windows over fixed and
// symbolic dims, and comparing the shapes it found.
#include <algorithm>

#include "passes/shape_inference.h"

namespace osprey::passes {
namespace {

SymDim fixed_dim(int64_t v) {
  return SymDim{v, ""};
}
SymDim sym_dim(std::string s) {
  return SymDim{-1, std::move(s)};
}

}  // namespace

// The dim of a broadcast: equal dims, a dim against 1, or a fixed size > 1 against anything
// (the only size a successful run can have).
// True when `m` is min(S, D) (from slice_shape) of the symbol S of `s`, with D > 1: against
// S it can only broadcast, in a run that succeeds, to S itself.
static bool is_min_of(const SymDim& m, const SymDim& s) {
  return !s.sym.empty() && m.sym.rfind("min(" + s.sym + ",", 0) == 0;
}

static SymDim broadcast_dim(const SymDim& a, const SymDim& b) {
  if (a == b) return a;
  if (is_min_of(a, b)) return b;
  if (is_min_of(b, a)) return a;
  if (a.fixed() && a.value == 1) return b;
  if (b.fixed() && b.value == 1) return a;
  if (a.fixed() && b.fixed()) return {};  // fails at run time
  if (a.fixed() && a.value > 1) return a;
  if (b.fixed() && b.value > 1) return b;
  return {};
}

SymShape broadcast_sym(const SymShape& a, const SymShape& b) {
  const size_t r = std::max(a.size(), b.size());
  SymShape out(r);
  for (size_t i = 0; i < r; ++i) {
    const SymDim one = fixed_dim(1);
    const SymDim& da = i < r - a.size() ? one : a[i - (r - a.size())];
    const SymDim& db = i < r - b.size() ? one : b[i - (r - b.size())];
    out[i] = broadcast_dim(da, db);
  }
  return out;
}

// Output size of a sliding window over one spatial dim (Conv, pools).
SymDim window_sym_dim(const SymDim& in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                      const std::string& auto_pad, bool ceil_mode) {
  if (!in.known() || k <= 0 || s <= 0 || d <= 0) return {};
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (auto_pad == "VALID") pb = pe = 0;
  if (in.fixed()) {
    if (same) return fixed_dim((in.value + s - 1) / s);
    const int64_t span = in.value + pb + pe - ((k - 1) * d + 1);
    if (span < 0) return {};
    int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (out - 1) * s >= in.value + pb) --out;
    return fixed_dim(out);
  }
  if (same) return s == 1 ? in : sym_dim(str_cat("ceil(", in.sym, "/", s, ")"));
  if (k == 1 && s == 1 && pb == 0 && pe == 0) return in;
  return sym_dim(str_cat("win(", in.sym, ",", k, ",", s, ",", d, ",", pb, ",", pe, ",",
                         ceil_mode ? 1 : 0, ")"));
}

bool ShapeFacts::same_shape(int a, int b) const {
  if (a == ir::kNoValue || b == ir::kNoValue) return false;
  const auto ia = static_cast<size_t>(a), ib = static_cast<size_t>(b);
  if (!has_shape[ia] || !has_shape[ib] || shapes[ia].size() != shapes[ib].size()) return false;
  for (size_t i = 0; i < shapes[ia].size(); ++i)
    if (!(shapes[ia][i] == shapes[ib][i])) return false;
  return true;
}

bool ShapeFacts::fixed_shape(int id, std::vector<int64_t>* dims) const {
  if (id == ir::kNoValue || !has_shape[static_cast<size_t>(id)]) return false;
  dims->clear();
  for (const SymDim& d : shapes[static_cast<size_t>(id)]) {
    if (!d.fixed()) return false;
    dims->push_back(d.value);
  }
  return true;
}

}  // namespace osprey::passes
