// The kernel table: one entry per (op, domain, opset range, dtypes, device) -> function.
// Entries are data, listed one per line in engine/kernels/registry.inc: K(...) for a kernel,
// KP(..., prepare) for one with a prepare step run once per node at session load.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel.h"

namespace osprey {

enum class Device { ref, cpu };
const char* device_name(Device d);

// Dtype sets, as bit masks over DType values.
using DTypeMask = uint32_t;
constexpr DTypeMask bit(DType t) { return DTypeMask{1} << static_cast<int>(t); }
constexpr DTypeMask kFloat = bit(DType::kFloat32) | bit(DType::kFloat64) | bit(DType::kFloat16) |
                             bit(DType::kBFloat16);
constexpr DTypeMask kSignedInt =
    bit(DType::kInt8) | bit(DType::kInt16) | bit(DType::kInt32) | bit(DType::kInt64);
constexpr DTypeMask kUnsignedInt =
    bit(DType::kUInt8) | bit(DType::kUInt16) | bit(DType::kUInt32) | bit(DType::kUInt64);
constexpr DTypeMask kInt = kSignedInt | kUnsignedInt;
constexpr DTypeMask kNumeric = kFloat | kInt;
constexpr DTypeMask kBool = bit(DType::kBool);
constexpr DTypeMask kStr = bit(DType::kString);
constexpr DTypeMask kAny = 0;  // no check (also for sequence inputs and no-input ops)

constexpr int kMaxOpset = 1000;

struct KernelDef {
  const char* op;
  const char* domain;  // "" = default ONNX domain
  int since;           // first opset version this kernel implements
  int until;           // last opset version (inclusive)
  DTypeMask dtypes;    // accepted dtypes of input 0 (kAny = no check)
  Device device;
  KernelFn fn;
  PrepareFn prepare;  // nullptr: nothing prepared at load
  bool accepts(DType t) const { return dtypes == kAny || (dtypes & bit(t)) != 0; }
};

const std::vector<KernelDef>& kernel_table();

// Best kernel for (op, domain, opset) whose dtype set accepts `dtype`
// (kUndefined = any dtype). Fast devices are preferred over reference ones
// unless `reference_only`. nullptr when none.
const KernelDef* find_kernel(const std::string& op, const std::string& domain, int opset,
                             DType dtype, bool reference_only);

// Ops (name, domain) that have at least one kernel (osprey/ops.h groups the table for `osprey ops`).
std::vector<std::string> registered_ops();

}  // namespace osprey
