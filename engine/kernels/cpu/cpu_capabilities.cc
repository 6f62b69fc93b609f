#include "kernels/cpu/cpu_capabilities.h"

#include <cpuid.h>

#include "kernels/cpu/dnnl_common.h"

namespace osprey::cpu {
namespace {

struct Probe {
  bool native = false;
  std::string impl;
};

Probe run_probe() {
  Probe p;
  try {
    using dnnl::memory;
    const memory::dims a = {64, 64}, b = {64, 64}, c = {64, 64};
    const memory::desc a_md(a, memory::data_type::bf16, memory::format_tag::ab);
    const memory::desc b_md(b, memory::data_type::bf16, memory::format_tag::any);
    const memory::desc c_md(c, memory::data_type::f32, memory::format_tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), dnnl_engine());
    p.impl = pd.impl_info_str();
    // Native kernels name their ISA: "brg:avx512_core_amx_bf16", "brg:avx512_core_bf16". On a
    // CPU without bf16 instructions oneDNN answers "gemm:jit" (bf16 emulated on avx512_core,
    // slower than float32) or "ref:any".
    p.native = p.impl.find("bf16") != std::string::npos || p.impl.find("amx") != std::string::npos;
  } catch (const dnnl::error& e) {
    p.impl = std::string("no bf16 matmul: ") + e.what();
  }
  return p;
}

const Probe& probe() {
  static const Probe p = run_probe();
  return p;
}

}  // namespace

bool bf16_compute_available() {
  return probe().native;
}

const std::string& bf16_probe_implementation() {
  return probe().impl;
}

bool int8_vnni_available() {
  const int isa = static_cast<int>(dnnl::get_effective_cpu_isa());
  return (isa & dnnl_cpu_isa_avx512_core_vnni) == dnnl_cpu_isa_avx512_core_vnni ||
         (isa & dnnl_cpu_isa_avx2_vnni) == dnnl_cpu_isa_avx2_vnni;
}

bool avx512_kernels_available() {
  const int isa = static_cast<int>(dnnl::get_effective_cpu_isa());
  return (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
}

bool avx512_in_halves() {
  static const bool halves = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__builtin_cpu_is("amd") || !__builtin_cpu_supports("avx512f") || !__get_cpuid(1, &a, &b, &c, &d))
      return false;
    return ((a >> 8) & 0xfu) + ((a >> 20) & 0xffu) == 0x19u;  // base + extended family
  }();
  return halves;
}

}  // namespace osprey::cpu
