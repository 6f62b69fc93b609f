// What the oneDNN CPU kernels can do on this machine (no oneDNN types: passes and the session
// ask without including oneDNN).
#pragma once

#include <string>

namespace osprey::cpu {

// True when oneDNN runs bfloat16 matrix products with a native implementation here (a CPU
// with avx512_bf16 or AMX-BF16 whose register state the OS enabled), not a reference or
// emulated one. Checked once by creating a small bf16 matmul primitive; cached.
bool bf16_compute_available();

// The implementation oneDNN picked for that probe ("brg:avx512_core_amx", "ref:any", ...), or
// the error it gave; for messages.
const std::string& bf16_probe_implementation();

// True when oneDNN's int8 kernels here multiply with VNNI (avx512_vnni or avx_vnni, allowed by
// ONEDNN_MAX_CPU_ISA): their uint8 x int8 products accumulate straight into int32. Without it
// they pair products in saturating int16 sums (vpmaddubsw), which overflow for full-range
// activations and weights, so the int8 convolutions are not used there.
bool int8_vnni_available();

// True when oneDNN runs AVX-512 kernels here (the CPU has them and ONEDNN_MAX_CPU_ISA allows).
bool avx512_kernels_available();

// True when the CPU runs 512-bit operations in two 256-bit halves: AMD's family 19h with
// AVX-512 (Zen 4), half the FMA rate of cores with full-width AVX-512 against the same memory.
// Cached.
bool avx512_in_halves();

}  // namespace osprey::cpu
