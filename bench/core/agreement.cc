#include "core/agreement.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace osprey::bench {
namespace {

std::vector<int64_t> top_k(const std::vector<double>& row, int k) {
  std::vector<int64_t> idx(row.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int64_t a, int64_t b) {
    return row[a] > row[b] || (row[a] == row[b] && a < b);
  });
  idx.resize(k);
  return idx;
}

}  // namespace

OutputAgreement compare_outputs(const std::string& name, const Tensor& reference,
                                const Tensor& other) {
  OutputAgreement a;
  a.output = name;
  if (reference.dtype() == DType::kString || other.dtype() == DType::kString) {
    a.note = "string outputs are not compared";
    return a;
  }
  if (reference.shape() != other.shape()) {
    a.note = "shape " + shape_to_string(other.shape()) + " differs from the reference's " +
             shape_to_string(reference.shape());
    return a;
  }
  a.compared = true;
  if (reference.dtype() != other.dtype())
    a.note = std::string("dtype ") + dtype_name(other.dtype()) + " differs from the reference's " +
             dtype_name(reference.dtype()) + "; compared as double";
  const int64_t n = reference.numel();
  double dot = 0, nr = 0, no = 0;
  bool nan_mismatch = false;
  std::vector<double> r(static_cast<size_t>(n)), o(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double x = reference.get_as_double(i), y = other.get_as_double(i);
    r[i] = x;
    o[i] = y;
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) nan_mismatch = true;
      continue;
    }
    const double d = (std::isinf(x) && x == y) ? 0.0 : std::fabs(x - y);
    a.max_abs = std::max(a.max_abs, d);
    a.max_rel = std::max(a.max_rel, d / std::max(std::fabs(x), 1e-6));
    dot += x * y;
    nr += x * x;
    no += y * y;
  }
  if (nan_mismatch) {
    a.max_abs = a.max_rel = std::numeric_limits<double>::infinity();
    a.note += std::string(a.note.empty() ? "" : "; ") + "NaN on one side only";
  }
  if (nr == 0 && no == 0)
    a.cosine = 1;
  else if (nr == 0 || no == 0)
    a.cosine = 0;
  else
    a.cosine = dot / (std::sqrt(nr) * std::sqrt(no));

  if (dtype_is_float(reference.dtype()) && reference.rank() == 2 && reference.dim(1) >= 2 &&
      reference.dim(0) > 0) {
    const int64_t rows = reference.dim(0), classes = reference.dim(1);
    a.topk = static_cast<int>(std::min<int64_t>(5, classes));
    double top1 = 0, overlap = 0;
    for (int64_t row = 0; row < rows; ++row) {
      std::vector<double> rr(r.begin() + row * classes, r.begin() + (row + 1) * classes);
      std::vector<double> oo(o.begin() + row * classes, o.begin() + (row + 1) * classes);
      auto kr = top_k(rr, a.topk), ko = top_k(oo, a.topk);
      if (kr[0] == ko[0]) top1 += 1;
      int common = 0;
      for (int64_t x : kr) common += std::count(ko.begin(), ko.end(), x) > 0;
      overlap += static_cast<double>(common) / a.topk;
    }
    a.top1_agreement = top1 / static_cast<double>(rows);
    a.topk_overlap = overlap / static_cast<double>(rows);
  }
  return a;
}

}  // namespace osprey::bench
