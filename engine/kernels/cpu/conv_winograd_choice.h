// Whether oneDNN's Winograd primitive runs a float32 convolution faster than its direct one on
// the CPU at hand, measured once per shape in the process (conv_dnnl.cc asks it for the
// convolutions that winograd = 1, "auto", leaves eligible).
#pragma once

#include <cstdint>
#include <vector>

#include <dnnl.hpp>

namespace osprey::cpu {

// What both candidates read and write as the run path does: the tensors' own layouts of the
// source and destination (each primitive's are reordered from and to them per run) and the
// plain weights (reordered once into each primitive's layout before the timing).
struct ConvTrialIo {
  dnnl::memory::desc src_plain, dst_plain, w_plain, bias_md;
  const void* weights = nullptr;
  bool has_bias = false;
};

// Why: the Winograd kernels' gain depends on the core, not only the shape. On an Intel Xeon
// (Ice Lake, two FMA ports) ResNet50's 256-channel 14x14 layers ran 2.5 ms with oneDNN's
// F(2x2, 3x3) Winograd against 2.0 ms direct, while on AMD Zen 5 they gained 17%; the 64- and
// 128-channel layers gained on both. So: each candidate runs as the run path runs it (the
// Winograd one with its source and destination reorders), on zeros, with its weights evicted
// from the caches before each run (in a model they come from memory), one warm-up and then
// up to kWinogradTrialRounds alternating runs (fewer when one side's fastest run is under
// kWinogradClearGap of the other's after kWinogradClearRounds), and Winograd is taken when
// its fastest run beats the direct one's by kWinogradMargin (its weights are larger, and the
// plain ones are kept beside them). `key` names the shape (and thread count); the answer is
// kept for the process, so the other layers of that shape, and other sessions, are not timed
// again. The timing is part of the session's load: ResNet50's three shapes took about 90 ms
// of it on an Ice Lake server with 6 rounds each, 50 ms where the gaps were clear.
bool winograd_measured_faster(const dnnl::convolution_forward::primitive_desc& winograd,
                              const dnnl::convolution_forward::primitive_desc& direct,
                              const ConvTrialIo& io, const std::vector<int64_t>& key);

inline constexpr int kWinogradTrialRounds = 6;
inline constexpr double kWinogradMargin = 0.95;
// A gap this wide after kWinogradClearRounds rounds decides at once.
inline constexpr int kWinogradClearRounds = 2;
inline constexpr double kWinogradClearGap = 0.8;

// Timings made since the process started (tests: whether a shape was timed or remembered).
int64_t winograd_trials_run();

}  // namespace osprey::cpu
