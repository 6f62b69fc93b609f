// String ops of opset 20: StringConcat (element-wise, broadcasting) and StringSplit (each
// string split by a delimiter, or by runs of whitespace when the delimiter is empty, at most
// maxsplit times; the pieces padded with "" to the longest count, and the counts).
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/elementwise_util.h"

namespace osprey::ref {
namespace {

Status require_strings(const KernelContext& ctx, int i, const char* op) {
  if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor())
    return invalid_argument(op, ": input ", i, " must be a tensor");
  if (ctx.input(i).dtype() != DType::kString)
    return invalid_argument(op, ": input ", i, " must be string, got ", dtype_name(ctx.input(i).dtype()));
  return Status::Ok();
}

// Python's str.split(): with a delimiter every occurrence splits (empty pieces kept); without,
// runs of whitespace split and leading/trailing whitespace gives no pieces.
std::vector<std::string> split(const std::string& s, const std::string& delim, int64_t maxsplit) {
  std::vector<std::string> out;
  if (!delim.empty()) {
    size_t start = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      const size_t at = s.find(delim, start);
      if (at == std::string::npos) break;
      out.push_back(s.substr(start, at - start));
      start = at + delim.size();
    }
    out.push_back(s.substr(start));
    return out;
  }
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && space(s[i])) ++i;
    if (i == s.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {  // the rest, trailing space dropped
      size_t end = s.size();
      while (end > i && space(s[end - 1])) --end;
      out.push_back(s.substr(i, end - i));
      break;
    }
    size_t j = i;
    while (j < s.size() && !space(s[j])) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

Status string_concat(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_strings(ctx, 0, "StringConcat"));
  OSPREY_RETURN_IF_ERROR(require_strings(ctx, 1, "StringConcat"));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Shape out;
  Status s = broadcast_shapes({a.shape(), b.shape()}, &out);
  if (!s.ok()) return invalid_argument("StringConcat: ", s.message());
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, DType::kString, out));
  broadcast_binary(a.shape(), a.data<std::string>(), b.shape(), b.data<std::string>(), out,
                   y.data<std::string>(), [](const std::string& x, const std::string& z) { return x + z; });
  return Status::Ok();
}

Status string_split(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_strings(ctx, 0, "StringSplit"));
  const Tensor& x = ctx.input(0);
  const std::string delim = ctx.attr_string("delimiter", "");
  const int64_t maxsplit = ctx.has_attr("maxsplit") ? ctx.attr_int("maxsplit", -1) : -1;
  if (ctx.has_attr("maxsplit") && maxsplit < 0) return invalid_argument("maxsplit must not be negative");
  std::vector<std::vector<std::string>> pieces(static_cast<size_t>(x.numel()));
  size_t longest = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    pieces[static_cast<size_t>(i)] = split(x.data<std::string>()[i], delim, maxsplit);
    longest = std::max(longest, pieces[static_cast<size_t>(i)].size());
  }
  Shape ys = x.shape();
  ys.push_back(static_cast<int64_t>(longest));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, DType::kString, ys));
  OSPREY_ASSIGN_OR_RETURN(Tensor z, ctx.new_output(1, DType::kInt64, x.shape()));
  for (size_t i = 0; i < pieces.size(); ++i) {
    for (size_t k = 0; k < pieces[i].size(); ++k) y.data<std::string>()[i * longest + k] = pieces[i][k];
    z.data<int64_t>()[i] = static_cast<int64_t>(pieces[i].size());
  }
  return Status::Ok();
}

}  // namespace osprey::ref
