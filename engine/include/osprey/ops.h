// The ops the engine runs, for `osprey ops` and docs/OPERATORS.md: per (domain, op), the opset
// versions its kernels cover (for the default domain, within what the loader accepts), the
// element types of input 0 the reference kernels take, and those of the fast CPU kernel.
#pragma once

#include <string>
#include <vector>

namespace osprey {

struct OpSupport {
  std::string domain;  // "" = the default ONNX domain
  std::string op;
  std::string opsets;  // "1-22", "7-8, 13-22", "1+" (a domain the loader does not bound)
  std::string types;   // element types of input 0, "any" when the kernel does not check
  std::string cpu_types;  // the fast CPU kernel's; empty when the op has none
};

// Every op with a kernel, sorted by domain (default first) then op.
std::vector<OpSupport> supported_ops();

// The default-domain opsets the loader accepts.
int min_default_opset();
int max_default_opset();

}  // namespace osprey
