// What the oneDNN convolution and int8 kernels (conv_dnnl.cc, qconv_dnnl.cc,
// matmul_integer_dnnl.cc) tell beyond their entry points in cpu.inc.
#pragma once

#include <cstdint>

namespace osprey::cpu {

// With winograd = 1 a convolution runs Winograd only when both its input and output channels
// reach this: below it Winograd did not pay against brgconv with AVX-512 at 2 threads (1.2x
// slower at 16 channels, even at 32; 0.55-0.7x the time from 64 on, reorders included).
inline constexpr int64_t kWinogradMinChannels = 64;
// ... and only when its output has at least this many pixels (14x14): at 7x7 (ResNet50's layer
// 4) Winograd saved under 10% of the time while its weights take 16/9 the memory of the plain
// ones (32 MB more for ResNet50's two stride-1 layer-4 convolutions). Past both, a node with
// constant weights still runs Winograd only where it measured faster (conv_winograd_choice.h).
inline constexpr int64_t kWinogradMinPixels = 14 * 14;
// Where the CPU runs 512-bit FMAs in two halves (avx512_in_halves: AMD's Zen 4) from 7x7: there
// our F(2x2) form ran ResNet50's two stride-1 layer-4 convolutions in 4.90 against 6.58 ms on
// one thread (2.64 against 3.53 on two), its weights 15 MB more than the plain ones it releases.
inline constexpr int64_t kWinogradMinPixelsHalfRate = 7 * 7;
// The one of the two for this CPU.
int64_t winograd_min_pixels();

// Convolution primitives built with oneDNN's Winograd algorithm since the process started
// (tests: whether a node took the Winograd path).
int64_t winograd_convolutions_built();

// int8 convolution primitives (com.osprey QLinearConv, qconv_dnnl.cc) built since the process
// started (tests: whether a node ran on oneDNN rather than the reference).
int64_t int8_convolutions_built();

// int8 matmul primitives (MatMulInteger, matmul_integer_dnnl.cc) built since the process started.
int64_t int8_matmuls_built();

}  // namespace osprey::cpu
