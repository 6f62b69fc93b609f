// Options that shape how a Session loads and runs a model.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace osprey {

// How convolutions and matrix products compute.
//   kExact: float32 throughout (the default).
//   kFast:  Conv, FusedConv, MatMul, FusedMatMul and Gemm read their operands rounded to
//           bfloat16 and accumulate in float32 (outputs stay float32); every other op
//           (softmax, normalization, reductions, element-wise) stays float32. Needs a CPU with
//           avx512_bf16 or AMX-BF16: elsewhere the session load fails with kFailedPrecondition
//           instead of running slower or in float32 unannounced.
enum class Precision { kExact, kFast };

// "exact" / "fast".
const char* precision_name(Precision p);

// Whether a batch runs one item at a time (see Session::batch_split_summary): kAuto for
// convolutional graphs separable along axis 0 (measured faster with AVX2 and with AVX-512: the
// whole batch falls out of the caches between layers), except from the node on which the
// weights dominate and the batch's activations fit the last-level cache, where the batch runs
// whole (batch_cuts in runtime/batch_split.h; the whole graph when that node is the first);
// kOn item by item throughout whenever the graph is separable (graphs without convolutions
// too); kOff never.
enum class BatchSplit { kAuto, kOn, kOff };

// Whether chains of 2-D convolutions run in oneDNN's blocked nChw8c layout rather than
// channels-last (the channels_blocked pass, optimization level 2): kAuto on CPUs without
// AVX-512 (where it was measured faster, ResNet50 about 7% at 1 thread) for regions of at least
// 4 eligible convolutions and 4 per layout conversion they need; kOn for every eligible region
// whatever the CPU; kOff never.
enum class BlockedLayout { kAuto, kOn, kOff };

// Whether float32 3x3 convolutions with stride 1, dilation 1 and one group run with a Winograd
// algorithm (still float32): our own F(4x4, 3x3) / F(2x2, 3x3) over channels-last tensors with
// channel counts that are multiples of 16 on AVX-512 CPUs (kernels/cpu/conv_winograd_nhwc.h),
// elsewhere oneDNN's where it offers one; the kernel falls back to the direct algorithm where
// neither applies (as on CPUs without AVX-512). kAuto where it was measured to pay: 64 or more
// input and output channels and an output of at least 14x14, or 7x7 on CPUs that run 512-bit
// FMAs in halves (AMD's Zen 4) (ResNet50's stride-1 3x3 layers of stages 1-3, and of stage 4
// there: about three quarters of their time with oneDNN's Winograd primitive inside the
// model at 1 thread, and less memory, the plain weights released); kOn for every eligible
// convolution; kOff never. Its results differ from the direct algorithm's by rounding only (up
// to about 1e-5 of the output's magnitude with F(4x4) on ResNet50's layers). Fast mode's bf16
// convolutions are direct.
enum class Winograd { kAuto, kOn, kOff };

struct SessionOptions {
  // Worker threads for one run; 0 = what sched_getaffinity and the cgroup CPU quota allow.
  int threads = 0;
  // Pin worker threads to CPUs: at the start of each run, worker i of the calling thread's
  // OpenMP team (1 <= i < threads; the caller is thread 0 and is never pinned) is pinned to the
  // (i mod k)-th of the k CPUs in the process's affinity mask. OpenMP keeps one team per calling
  // thread and shares it with oneDNN and with other sessions run from that thread, so the pins
  // stay after the run: run unpinned sessions from another thread to keep them unpinned.
  // Off by default: the OS places the threads.
  bool pin_threads = false;
  // 0 = run the graph as imported; 1 = clean-ups and folds; 2 = also fusions into com.osprey
  // ops (see docs/ARCHITECTURE.md, Optimization passes).
  int optimization_level = 2;
  Precision precision = Precision::kExact;
  BatchSplit batch_split = BatchSplit::kAuto;
  BlockedLayout blocked_layout = BlockedLayout::kAuto;
  Winograd winograd = Winograd::kAuto;
  // Optimization passes not to run, by name (docs/ARCHITECTURE.md, Optimization passes; e.g.
  // "qkv_projection_merge"), to compare a model with and without one. A name that is not a
  // pass fails the load.
  std::vector<std::string> disabled_passes;
  // When set, called around every optimization pass that runs with (pass name, "before" or
  // "after", the graph as text in Session::graph_dump's form): `osprey inspect --dump-passes`.
  // Dumping costs time; unset by default.
  std::function<void(const std::string& pass, const std::string& stage, const std::string& graph)>
      pass_dump;
  // Upper bound on the elements of any one tensor (declared or computed). Shapes above
  // this are refused before anything is allocated.
  int64_t max_tensor_elements = int64_t{1} << 31;
  // Upper bound on the bytes held by one run's live intermediates; 0 = no limit.
  int64_t memory_limit_bytes = 0;
  // Directory that external-data paths are relative to when loading from bytes.
  std::string external_data_dir;
};

}  // namespace osprey
