#include "format.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace osprey::cli {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

template <class T>
double as_double(T v) {
  return static_cast<double>(static_cast<float>(v));  // Float16/BFloat16 convert through float
}
double as_double(double v) { return v; }

template <class T>
std::string float_summary(const T* p, int64_t n) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  int64_t finite = 0, nan = 0, inf = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = as_double(p[i]);
    if (std::isnan(v)) {
      ++nan;
    } else if (std::isinf(v)) {
      ++inf;
    } else {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
      ++finite;
    }
  }
  std::string s;
  if (finite > 0) s = "min=" + num(lo) + " max=" + num(hi) + " mean=" + num(sum / static_cast<double>(finite));
  if (nan) s += std::string(s.empty() ? "" : " ") + "nan=" + std::to_string(nan);
  if (inf) s += std::string(s.empty() ? "" : " ") + "inf=" + std::to_string(inf);
  return s;
}

template <class T>
std::string int_summary(const T* p, int64_t n) {
  T lo = p[0], hi = p[0];
  for (int64_t i = 1; i < n; ++i) {
    lo = std::min(lo, p[i]);
    hi = std::max(hi, p[i]);
  }
  return "min=" + std::to_string(lo) + " max=" + std::to_string(hi);
}

}  // namespace

std::string format_type(DType dtype, const Shape& shape) { return std::string(dtype_name(dtype)) + shape_to_string(shape); }

std::string format_info(const TensorInfo& info) {
  std::string s = info.is_sequence ? "seq(" + std::string(dtype_name(info.dtype)) + ")" : dtype_name(info.dtype);
  if (!info.has_shape) return s + "[?]";  // rank unknown
  s += "[";
  for (size_t i = 0; i < info.shape.size(); ++i) {
    if (i) s += ",";
    const Dim& d = info.shape[i];
    s += d.is_fixed() ? std::to_string(d.value) : (d.symbol.empty() ? "?" : d.symbol);
  }
  return s + "]";
}

std::string value_summary(const Tensor& t) {
  const int64_t n = t.numel();
  if (n <= 0 || !t.defined()) return "";
  switch (t.dtype()) {
    case DType::kFloat32: return float_summary(t.data<float>(), n);
    case DType::kFloat64: return float_summary(t.data<double>(), n);
    case DType::kFloat16: return float_summary(t.data<Float16>(), n);
    case DType::kBFloat16: return float_summary(t.data<BFloat16>(), n);
    case DType::kInt8: return int_summary(t.data<int8_t>(), n);
    case DType::kInt16: return int_summary(t.data<int16_t>(), n);
    case DType::kInt32: return int_summary(t.data<int32_t>(), n);
    case DType::kInt64: return int_summary(t.data<int64_t>(), n);
    case DType::kUInt8: return int_summary(t.data<uint8_t>(), n);
    case DType::kUInt16: return int_summary(t.data<uint16_t>(), n);
    case DType::kUInt32: return int_summary(t.data<uint32_t>(), n);
    case DType::kUInt64: return int_summary(t.data<uint64_t>(), n);
    case DType::kBool: {
      const auto* p = static_cast<const unsigned char*>(t.raw_data());
      int64_t ones = 0;
      for (int64_t i = 0; i < n; ++i) ones += p[i] != 0;
      return "true=" + std::to_string(ones) + "/" + std::to_string(n);
    }
    default: return "";
  }
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[48];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", bytes, units[u]);
  }
  return buf;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", u);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace osprey::cli
