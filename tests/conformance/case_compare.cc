#include "case_compare.h"

#include <cmath>

namespace osprey::conformance {

namespace {
std::string compare_tensors(const Tensor& got, const Tensor& want, const Tolerance& tol) {
  if (!got.defined()) return "output missing";
  if (got.dtype() != want.dtype())
    return str_cat("dtype ", dtype_name(got.dtype()), ", expected ", dtype_name(want.dtype()));
  if (got.shape() != want.shape())
    return str_cat("shape ", shape_to_string(got.shape()), ", expected ", shape_to_string(want.shape()));
  const int64_t n = got.numel();
  if (got.dtype() == DType::kString) {
    for (int64_t i = 0; i < n; ++i)
      if (got.data<std::string>()[i] != want.data<std::string>()[i])
        return str_cat("element ", i, " is \"", got.data<std::string>()[i], "\", expected \"",
                       want.data<std::string>()[i], "\"");
    return "";
  }
  const bool is_float = dtype_is_float(got.dtype());
  int64_t bad = 0, first_bad = -1;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (is_float) {
      const double g = got.get_as_double(i), w = want.get_as_double(i);
      if (std::isnan(w) && std::isnan(g)) continue;
      if (std::isinf(w) && g == w) continue;
      const double err = std::fabs(g - w);
      if (!(err <= tol.atol + tol.rtol * std::fabs(w))) {
        if (first_bad < 0) first_bad = i;
        ++bad;
        if (!(err <= worst)) worst = err;
      }
    } else if (got.get_as_int64(i) != want.get_as_int64(i) ||
               got.get_as_double(i) != want.get_as_double(i)) {
      if (first_bad < 0) first_bad = i;
      ++bad;
    }
  }
  if (bad == 0) return "";
  return str_cat(bad, "/", n, " elements differ; first at ", first_bad, ": got ",
                 got.get_as_double(first_bad), ", expected ", want.get_as_double(first_bad),
                 is_float ? str_cat(" (max abs err ", worst, ")") : std::string());
}
}  // namespace

std::string compare_values(const Value& got, const Value& want, const Tolerance& tol) {
  if (want.is_none()) return got.is_none() ? "" : "expected an empty optional";
  if (got.is_none()) return "output is empty (none)";
  if (want.is_sequence()) {
    if (!got.is_sequence()) return "expected a sequence";
    if (got.sequence.size() != want.sequence.size())
      return str_cat("sequence of ", got.sequence.size(), ", expected ", want.sequence.size());
    for (size_t i = 0; i < want.sequence.size(); ++i) {
      std::string r = compare_tensors(got.sequence[i], want.sequence[i], tol);
      if (!r.empty()) return str_cat("sequence element ", i, ": ", r);
    }
    return "";
  }
  if (!got.is_tensor()) return "expected a tensor, got a sequence";
  return compare_tensors(got.tensor, want.tensor, tol);
}

}  // namespace osprey::conformance
