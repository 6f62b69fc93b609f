// Linear algebra: Einsum (general: repeated labels / diagonals, ellipsis broadcasting,
// implicit output), Det.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "kernels/reference/common.h"
#include "kernels/reference/reduction_util.h"

namespace osprey::ref {
namespace {

// Label ids: 'A'..'Z' -> 0..25, 'a'..'z' -> 26..51 (ASCII order, used for implicit output);
// ellipsis dims are 52 + k, right-aligned over the widest ellipsis.
constexpr int kLetters = 52;

int letter_id(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return 26 + (ch - 'a');
  return -1;
}

struct Term {
  std::vector<int> letters_before, letters_after;  // letter ids before/after "..."
  bool ellipsis = false;
};

Status parse_term(const std::string& s, Term* t) {
  *t = {};
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 3, "...") == 0) {
      if (t->ellipsis) return invalid_argument("equation term '", s, "' has more than one '...'");
      t->ellipsis = true;
      i += 3;
      continue;
    }
    const int id = letter_id(s[i]);
    if (id < 0) return invalid_argument("equation term '", s, "' has invalid character '", s[i], "'");
    (t->ellipsis ? t->letters_after : t->letters_before).push_back(id);
    ++i;
  }
  return Status::Ok();
}

// One operand's labels per dim, after expanding its ellipsis.
std::vector<int> term_labels(const Term& t, int64_t ell_rank, int64_t max_ell) {
  std::vector<int> labels = t.letters_before;
  for (int64_t k = 0; k < ell_rank; ++k)
    labels.push_back(kLetters + static_cast<int>(max_ell - ell_rank + k));
  labels.insert(labels.end(), t.letters_after.begin(), t.letters_after.end());
  return labels;
}

template <class T>
void einsum_run(const std::vector<const T*>& in, T* out, const Shape& out_shape,
                const std::vector<std::vector<int64_t>>& out_strides, const Shape& red_shape,
                const std::vector<std::vector<int64_t>>& red_strides) {
  using A = acc_t<T>;
  const size_t ni = in.size();
  const int64_t out_n = shape_numel(out_shape);
  // The last reduced dim runs in a tight loop; the others through an odometer.
  Shape outer_red(red_shape.begin(), red_shape.end() - 1);
  const int64_t last = red_shape.back();
  std::vector<int64_t> last_stride(ni);
  std::vector<std::vector<int64_t>> outer_strides(ni);
  for (size_t i = 0; i < ni; ++i) {
    last_stride[i] = red_strides[i].back();
    outer_strides[i].assign(red_strides[i].begin(), red_strides[i].end() - 1);
  }
  const int64_t outer_n = shape_numel(outer_red);
  StridedIter oit(out_shape, out_strides);
  // Walking all outer_n positions brings `rit` back to the start, so one serves every output.
  StridedIter rit(outer_red, outer_strides);
  std::vector<int64_t> off(ni);
  for (int64_t o = 0; o < out_n; ++o, oit.next()) {
    A acc = A(0);
    for (int64_t r = 0; r < outer_n; ++r, rit.next()) {
      for (size_t i = 0; i < ni; ++i) off[i] = oit.offset(i) + rit.offset(i);
      if (ni == 1) {
        for (int64_t k = 0; k < last; ++k) acc = acc_add(acc, cast_to<A>(in[0][off[0] + k * last_stride[0]]));
      } else if (ni == 2) {
        for (int64_t k = 0; k < last; ++k)
          acc = acc_add(acc, acc_mul(cast_to<A>(in[0][off[0] + k * last_stride[0]]),
                                     cast_to<A>(in[1][off[1] + k * last_stride[1]])));
      } else {
        for (int64_t k = 0; k < last; ++k) {
          A p = A(1);
          for (size_t i = 0; i < ni; ++i) p = acc_mul(p, cast_to<A>(in[i][off[i] + k * last_stride[i]]));
          acc = acc_add(acc, p);
        }
      }
    }
    out[o] = cast_to<T>(acc);
  }
}

}  // namespace

Status einsum(KernelContext& ctx) {
  const int ni = ctx.num_inputs();
  if (ni < 1) return invalid_argument("Einsum needs at least one input");
  for (int i = 0; i < ni; ++i) {
    OSPREY_RETURN_IF_ERROR(require_rank(ctx, i, 0, 64));
    OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, i));
  }
  std::string eq;
  for (char ch : ctx.attr_string("equation", "")) if (ch != ' ') eq += ch;
  if (eq.empty()) return invalid_argument("attribute equation is required");
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.emplace_back();
    OSPREY_RETURN_IF_ERROR(parse_term(lhs.substr(start, comma - start), &terms.back()));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (static_cast<int>(terms.size()) != ni)
    return invalid_argument("equation '", eq, "' has ", terms.size(), " operand terms for ", ni,
                            " inputs");
  // Ellipsis ranks.
  int64_t max_ell = 0;
  std::vector<int64_t> ell(static_cast<size_t>(ni), 0);
  for (int i = 0; i < ni; ++i) {
    const Term& t = terms[static_cast<size_t>(i)];
    const int64_t nl = static_cast<int64_t>(t.letters_before.size() + t.letters_after.size());
    const int64_t r = ctx.input(i).rank();
    if (t.ellipsis ? r < nl : r != nl)
      return invalid_argument("input ", i, " has rank ", r, " but its equation term has ", nl,
                              " labels", t.ellipsis ? " and '...'" : "");
    ell[static_cast<size_t>(i)] = t.ellipsis ? r - nl : 0;
    max_ell = std::max(max_ell, ell[static_cast<size_t>(i)]);
  }
  const int nlabels = kLetters + static_cast<int>(max_ell);
  // Label sizes (ellipsis dims broadcast; letters must agree) and occurrence counts.
  std::vector<int64_t> size(static_cast<size_t>(nlabels), -1);
  std::vector<int> count(static_cast<size_t>(nlabels), 0);
  std::vector<std::vector<int>> labels(static_cast<size_t>(ni));
  for (int i = 0; i < ni; ++i) {
    const Tensor& x = ctx.input(i);
    labels[static_cast<size_t>(i)] = term_labels(terms[static_cast<size_t>(i)], ell[static_cast<size_t>(i)], max_ell);
    for (int64_t d = 0; d < x.rank(); ++d) {
      const int l = labels[static_cast<size_t>(i)][static_cast<size_t>(d)];
      int64_t& s = size[static_cast<size_t>(l)];
      ++count[static_cast<size_t>(l)];
      if (s < 0 || s == x.dim(d)) {
        s = x.dim(d);
      } else if (l >= kLetters && (s == 1 || x.dim(d) == 1)) {
        s = std::max(s, x.dim(d));
      } else {
        return invalid_argument("dimension ", d, " of input ", i, " has size ", x.dim(d),
                                " but its label already has size ", s);
      }
    }
  }
  // Output labels.
  std::vector<int> out_labels;
  if (arrow == std::string::npos) {
    for (int l = kLetters; l < nlabels; ++l) out_labels.push_back(l);
    for (int l = 0; l < kLetters; ++l)
      if (count[static_cast<size_t>(l)] == 1) out_labels.push_back(l);
  } else {
    Term t;
    OSPREY_RETURN_IF_ERROR(parse_term(eq.substr(arrow + 2), &t));
    out_labels = term_labels(t, t.ellipsis ? max_ell : 0, max_ell);
    std::vector<bool> seen(static_cast<size_t>(nlabels), false);
    for (int l : out_labels) {
      if (count[static_cast<size_t>(l)] == 0)
        return invalid_argument("output label of equation '", eq, "' does not appear in any input");
      if (seen[static_cast<size_t>(l)])
        return invalid_argument("output of equation '", eq, "' repeats a label");
      seen[static_cast<size_t>(l)] = true;
    }
  }
  std::vector<bool> in_out(static_cast<size_t>(nlabels), false);
  for (int l : out_labels) in_out[static_cast<size_t>(l)] = true;
  std::vector<int> red_labels;
  for (int l = 0; l < nlabels; ++l)
    if (count[static_cast<size_t>(l)] > 0 && !in_out[static_cast<size_t>(l)]) red_labels.push_back(l);
  // Per-input strides by label (repeated labels add up: a diagonal).
  std::vector<std::vector<int64_t>> label_stride(static_cast<size_t>(ni),
                                                 std::vector<int64_t>(static_cast<size_t>(nlabels), 0));
  for (int i = 0; i < ni; ++i) {
    const Tensor& x = ctx.input(i);
    const auto st = strides_of(x.shape());
    for (int64_t d = 0; d < x.rank(); ++d) {
      const int l = labels[static_cast<size_t>(i)][static_cast<size_t>(d)];
      if (x.dim(d) == 1 && size[static_cast<size_t>(l)] != 1) continue;  // broadcast
      label_stride[static_cast<size_t>(i)][static_cast<size_t>(l)] += st[static_cast<size_t>(d)];
    }
  }
  auto gather = [&](const std::vector<int>& ls, Shape* shape, std::vector<std::vector<int64_t>>* strides) {
    strides->assign(static_cast<size_t>(ni), {});
    for (int l : ls) {
      shape->push_back(size[static_cast<size_t>(l)]);
      for (int i = 0; i < ni; ++i)
        (*strides)[static_cast<size_t>(i)].push_back(label_stride[static_cast<size_t>(i)][static_cast<size_t>(l)]);
    }
  };
  Shape out_shape, red_shape;
  std::vector<std::vector<int64_t>> out_strides, red_strides;
  gather(out_labels, &out_shape, &out_strides);
  gather(red_labels, &red_shape, &red_strides);
  if (red_shape.empty()) {  // one dummy reduced dim of size 1
    red_shape.push_back(1);
    for (auto& s : red_strides) s.push_back(0);
  }
  const Tensor& x0 = ctx.input(0);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x0.dtype(), out_shape));
  return dispatch<NumericTypes>(x0.dtype(), "Einsum", [&]<class T>() {
    std::vector<const T*> in;
    for (int i = 0; i < ni; ++i) in.push_back(ctx.input(i).data<T>());
    einsum_run<T>(in, y.data<T>(), out_shape, out_strides, red_shape, red_strides);
    return Status::Ok();
  });
}

// Determinant of each trailing [M, M] matrix, by LU decomposition with partial pivoting.
Status det(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 2, 64));
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank(), m = x.dim(r - 1);
  if (x.dim(r - 2) != m)
    return invalid_argument("input must be square in its last two dims, got shape ",
                            shape_to_string(x.shape()));
  Shape out_shape(x.shape().begin(), x.shape().end() - 2);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), out_shape));
  const int64_t batch = y.numel();
  return dispatch<FloatTypes>(x.dtype(), "Det", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    std::vector<double> a(static_cast<size_t>(m * m));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t k = 0; k < m * m; ++k) a[static_cast<size_t>(k)] = cast_to<double>(in[b * m * m + k]);
      auto at = [&](int64_t i, int64_t j) -> double& { return a[static_cast<size_t>(i * m + j)]; };
      double d = 1.0;
      for (int64_t col = 0; col < m && d != 0.0; ++col) {
        int64_t piv = col;
        for (int64_t i = col + 1; i < m; ++i)
          if (std::abs(at(i, col)) > std::abs(at(piv, col))) piv = i;
        if (at(piv, col) == 0.0) {
          d = 0.0;
          break;
        }
        if (piv != col) {
          for (int64_t j = 0; j < m; ++j) std::swap(at(piv, j), at(col, j));
          d = -d;
        }
        d *= at(col, col);
        for (int64_t i = col + 1; i < m; ++i) {
          const double f = at(i, col) / at(col, col);
          for (int64_t j = col + 1; j < m; ++j) at(i, j) -= f * at(col, j);
        }
      }
      out[b] = cast_to<T>(d);
    }
    return Status::Ok();
  });
}

}  // namespace osprey::ref
