// supported_ops(): the kernel table (kernels/registry.h) grouped by (domain, op).
#include "osprey/ops.h"

#include <algorithm>
#include <map>
#include <utility>

#include "kernels/registry.h"
#include "onnx/onnx_import.h"

namespace osprey {
namespace {

// The types of a mask, whole families by name: floats (float32, float16, bfloat16, float64) and
// ints (int8-64, uint8-64).
std::string type_names(DTypeMask mask, bool any) {
  if (any) return "any";
  static constexpr DType kOrder[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64,
                                     DType::kInt8,    DType::kInt16,   DType::kInt32,    DType::kInt64,
                                     DType::kUInt8,   DType::kUInt16,  DType::kUInt32,   DType::kUInt64,
                                     DType::kBool,    DType::kString};
  std::string s;
  auto add = [&](const char* name) { s += (s.empty() ? "" : ", ") + std::string(name); };
  bool floats_named = false, ints_named = false;
  for (DType t : kOrder) {
    if (!(mask & bit(t))) continue;
    if ((bit(t) & kFloat) && (mask & kFloat) == kFloat) {
      if (!floats_named) add("floats");
      floats_named = true;
    } else if ((bit(t) & kInt) && (mask & kInt) == kInt) {
      if (!ints_named) add("ints");
      ints_named = true;
    } else {
      add(dtype_name(t));
    }
  }
  return s;
}

// Union of inclusive ranges, as "a-b, c-d" ("a+" for an open end).
std::string ranges(std::vector<std::pair<int, int>> r, bool bounded) {
  std::sort(r.begin(), r.end());
  std::vector<std::pair<int, int>> merged;
  for (const auto& [a, b] : r) {
    if (!merged.empty() && a <= merged.back().second + 1)
      merged.back().second = std::max(merged.back().second, b);
    else
      merged.emplace_back(a, b);
  }
  std::string s;
  for (const auto& [a, b] : merged) {
    if (!s.empty()) s += ", ";
    if (!bounded && b >= kMaxOpset) s += std::to_string(a) + "+";
    else if (a == b) s += std::to_string(a);
    else s += std::to_string(a) + "-" + std::to_string(b);
  }
  return s;
}

struct Group {
  std::vector<std::pair<int, int>> opsets;
  DTypeMask ref = 0, cpu = 0;
  bool ref_any = false, cpu_any = false, has_cpu = false;
};

}  // namespace

int min_default_opset() { return onnx_import::kMinDefaultOpset; }
int max_default_opset() { return onnx_import::kMaxDefaultOpset; }

std::vector<OpSupport> supported_ops() {
  std::map<std::pair<std::string, std::string>, Group> groups;
  for (const KernelDef& k : kernel_table()) {
    const std::string domain = k.domain;
    const bool onnx = domain.empty();
    const int lo = onnx ? std::max(k.since, onnx_import::kMinDefaultOpset) : k.since;
    const int hi = onnx ? std::min(k.until, onnx_import::kMaxDefaultOpset) : k.until;
    if (lo > hi) continue;  // only versions the loader refuses
    Group& g = groups[{domain, k.op}];
    if (k.device == Device::ref) {
      g.opsets.emplace_back(lo, hi);
      if (k.dtypes == kAny) g.ref_any = true;
      g.ref |= k.dtypes;
    } else {
      g.has_cpu = true;
      if (k.dtypes == kAny) g.cpu_any = true;
      g.cpu |= k.dtypes;
    }
  }
  std::vector<OpSupport> out;
  for (const auto& [key, g] : groups) {
    if (g.opsets.empty()) continue;  // a fast kernel always has its reference; kept for safety
    OpSupport s;
    s.domain = key.first;
    s.op = key.second;
    s.opsets = ranges(g.opsets, key.first.empty());
    s.types = type_names(g.ref, g.ref_any);
    if (g.has_cpu) s.cpu_types = type_names(g.cpu, g.cpu_any);
    out.push_back(std::move(s));
  }
  return out;  // the map's order: "" sorts first
}

}  // namespace osprey
