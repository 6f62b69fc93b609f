#include "kernels/registry.h"

#include <algorithm>
#include <set>

namespace osprey {

// Declare every kernel function listed in the table.
#define K(op, domain, since, until, dtypes, device, fn) \
  namespace device {                                    \
  Status fn(KernelContext&);                            \
  }
#define KP(op, domain, since, until, dtypes, device, fn, prepare)          \
  namespace device {                                                       \
  Status fn(KernelContext&);                                               \
  Result<std::shared_ptr<KernelState>> prepare(const KernelContext&);      \
  }
#include "kernels/registry.inc"
#undef K
#undef KP

const char* device_name(Device d) {
  switch (d) {
    case Device::ref: return "ref";
    case Device::cpu: return "cpu";
  }
  return "?";
}

const std::vector<KernelDef>& kernel_table() {
  static const std::vector<KernelDef> table = {
#define K(op, domain, since, until, dtypes, device, fn) \
  {op, domain, since, until, dtypes, Device::device, &device::fn, nullptr},
#define KP(op, domain, since, until, dtypes, device, fn, prepare) \
  {op, domain, since, until, dtypes, Device::device, &device::fn, &device::prepare},
#include "kernels/registry.inc"
#undef K
#undef KP
  };
  return table;
}

const KernelDef* find_kernel(const std::string& op, const std::string& domain, int opset,
                             DType dtype, bool reference_only) {
  const KernelDef* best = nullptr;
  for (const auto& k : kernel_table()) {
    if (op != k.op || domain != k.domain || opset < k.since || opset > k.until) continue;
    if (dtype != DType::kUndefined && !k.accepts(dtype)) continue;
    if (reference_only && k.device != Device::ref) continue;
    if (!best || (best->device == Device::ref && k.device != Device::ref)) best = &k;
  }
  return best;
}

std::vector<std::string> registered_ops() {
  std::set<std::string> names;
  for (const auto& k : kernel_table())
    names.insert(std::string(k.domain).empty() ? k.op : std::string(k.domain) + "::" + k.op);
  return {names.begin(), names.end()};
}

}  // namespace osprey
