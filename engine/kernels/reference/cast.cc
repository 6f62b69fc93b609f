// Cast and CastLike: conversions between all element types, strings included.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "kernels/reference/common.h"
#include "kernels/reference/elementwise_util.h"

namespace osprey::ref {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Parses a decimal or scientific number, or one of the special literals "NaN", "INF", "+INF",
// "-INF" (case-insensitive; "inf"/"infinity" spellings are accepted too). False if `s` is not
// entirely a number.
bool parse_double(std::string_view s, double* out) {
  s = trim(s);
  if (iequals(s, "nan") || iequals(s, "+nan") || iequals(s, "-nan")) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  bool neg = false;
  std::string_view body = s;
  if (!body.empty() && (body.front() == '+' || body.front() == '-')) {
    neg = body.front() == '-';
    body.remove_prefix(1);
  }
  if (iequals(body, "inf") || iequals(body, "infinity")) {
    *out = neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  if (body.empty() || body.front() == '+' || body.front() == '-') return false;
  double v = 0;
  auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  if (end != body.data() + body.size()) return false;
  if (ec == std::errc::result_out_of_range) {
    // Overflow or underflow: pick the limit from the exponent's sign.
    const bool tiny = body.find("e-") != std::string_view::npos ||
                      body.find("E-") != std::string_view::npos;
    v = tiny ? 0.0 : std::numeric_limits<double>::infinity();
  } else if (ec != std::errc()) {
    return false;
  }
  *out = neg ? -v : v;
  return true;
}

// String -> T. Integers are parsed exactly when the string is an integer literal, otherwise
// through double ("100.5" -> 100). Bools accept "true"/"false" or any number (non-zero = true).
template <class T>
Status from_string(const std::string& s, T* out) {
  if constexpr (std::is_same_v<T, bool>) {
    std::string_view t = trim(s);
    if (iequals(t, "true")) {
      *out = true;
      return Status::Ok();
    }
    if (iequals(t, "false")) {
      *out = false;
      return Status::Ok();
    }
  }
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    std::string_view t = trim(s);
    if (!t.empty() && t.front() == '+') t.remove_prefix(1);
    T v{};
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec == std::errc() && end == t.data() + t.size() && !t.empty()) {
      *out = v;
      return Status::Ok();
    }
  }
  double d = 0;
  if (!parse_double(s, &d))
    return invalid_argument("Cast: string \"", s.substr(0, 64), "\" is not a number");
  *out = convert<T>(d);
  return Status::Ok();
}

// Formats a number given in scientific notation ("-1.2345e-05") like numpy's str():
// positional for 1e-4 <= |v| < 1e16 ("-0.000012345" is not: it stays "-1.2345e-05"),
// scientific otherwise, with at least two exponent digits.
std::string format_like_numpy(const std::string& sci) {
  const size_t epos = sci.find('e');
  if (epos == std::string::npos) return sci;
  int exp = 0;
  std::from_chars(sci.data() + epos + (sci[epos + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exp);
  const bool neg = sci[0] == '-';
  std::string digits;
  for (size_t i = neg ? 1 : 0; i < epos; ++i)
    if (sci[i] != '.') digits += sci[i];
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string r = neg ? "-" : "";
  if (exp < -4 || exp >= 16) {
    r += digits.substr(0, 1);
    if (digits.size() > 1) {
      r += '.';
      r.append(digits, 1);
    }
    r += exp < 0 ? "e-" : "e+";
    const std::string e = std::to_string(exp < 0 ? -exp : exp);
    if (e.size() < 2) r += '0';
    r += e;
  } else if (exp < 0) {
    r += "0.";
    r.append(static_cast<size_t>(-exp - 1), '0');
    r += digits;
  } else {
    const size_t int_len = static_cast<size_t>(exp) + 1;
    if (digits.size() <= int_len) {
      r += digits;
      r.append(int_len - digits.size(), '0');
      r += ".0";
    } else {
      r.append(digits, 0, int_len);
      r += '.';
      r.append(digits, int_len);
    }
  }
  return r;
}

// Float -> the shortest decimal that reads back to the same value of type T (for the 16-bit
// floats: the same half value), formatted as numpy does. NaN and infinities are written "NaN",
// "INF", "-INF", the literals Cast reads back.
template <class T>
std::string float_to_string(T value) {
  using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const F v = static_cast<F>(value);
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  char* end = buf;
  if constexpr (is_half_v<T>) {
    for (int p = 0; p <= 9; ++p) {
      end = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific, p).ptr;
      float back = 0;
      std::from_chars(buf, end, back);
      if (T(back).bits == value.bits) break;
    }
  } else {
    end = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific).ptr;
  }
  return format_like_numpy(std::string(buf, end));
}

template <class T>
std::string to_string_elem(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "True" : "False";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else {
    return float_to_string(v);
  }
}

// Converts every element of x into the already allocated y.
Status cast_tensor(const Tensor& x, Tensor& y) {
  const int64_t n = x.numel();
  return dispatch<AllTypes>(x.dtype(), "Cast input", [&]<class From>() {
    const From* in = x.data<From>();
    return dispatch<AllTypes>(y.dtype(), "Cast output", [&]<class To>() {
      To* out = y.data<To>();
      if constexpr (std::is_same_v<From, To>) {
        std::copy(in, in + n, out);
      } else if constexpr (std::is_same_v<From, std::string>) {
        for (int64_t i = 0; i < n; ++i) OSPREY_RETURN_IF_ERROR(from_string(in[i], &out[i]));
      } else if constexpr (std::is_same_v<To, std::string>) {
        for (int64_t i = 0; i < n; ++i) out[i] = to_string_elem(in[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) out[i] = convert<To>(in[i]);
      }
      return Status::Ok();
    });
  });
}

// Opsets 1-5 gave `to` as a string: the TensorProto.DataType name.
bool dtype_from_legacy_name(const std::string& name, DType* out) {
  static const std::pair<const char*, DType> kNames[] = {
      {"FLOAT", DType::kFloat32},   {"UINT8", DType::kUInt8},     {"INT8", DType::kInt8},
      {"UINT16", DType::kUInt16},   {"INT16", DType::kInt16},     {"INT32", DType::kInt32},
      {"INT64", DType::kInt64},     {"STRING", DType::kString},   {"BOOL", DType::kBool},
      {"FLOAT16", DType::kFloat16}, {"DOUBLE", DType::kFloat64},  {"UINT32", DType::kUInt32},
      {"UINT64", DType::kUInt64},   {"BFLOAT16", DType::kBFloat16}};
  for (const auto& [n, t] : kNames)
    if (iequals(name, n)) {
      *out = t;
      return true;
    }
  return false;
}

Status check_input(const KernelContext& ctx, int i, const char* op) {
  if (!ctx.has_input(i)) return invalid_argument(op, ": input ", i, " is required");
  if (!ctx.input_value(i).is_tensor()) return invalid_argument(op, ": input ", i, " must be a tensor");
  return Status::Ok();
}

}  // namespace

Status cast(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(check_input(ctx, 0, "Cast"));
  const ir::Attribute* to_attr = ctx.node().find_attribute("to");
  if (!to_attr) return invalid_argument("Cast: attribute 'to' is required");
  DType to = DType::kUndefined;
  if (to_attr->type == ir::Attribute::Type::kString) {
    if (!dtype_from_legacy_name(to_attr->s, &to))
      return invalid_argument("Cast: attribute 'to' names an unknown type \"", to_attr->s, "\"");
  } else {
    if (to_attr->type != ir::Attribute::Type::kInt)
      return invalid_argument("Cast: attribute 'to' must be an int");
    to = static_cast<DType>(to_attr->i);
    if (to_attr->i < 1 || to_attr->i > 16 || !dtype_is_valid(to))
      return invalid_argument("Cast: attribute 'to' = ", to_attr->i,
                              " is not a supported element type");
  }
  const Tensor& x = ctx.input(0);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, to, x.shape()));
  return cast_tensor(x, y);
}

// CastLike(input, target_type): Cast to the element type of target_type.
Status cast_like(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(check_input(ctx, 0, "CastLike"));
  OSPREY_RETURN_IF_ERROR(check_input(ctx, 1, "CastLike"));
  const Tensor& x = ctx.input(0);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, ctx.input(1).dtype(), x.shape()));
  return cast_tensor(x, y);
}

}  // namespace osprey::ref
