#include "kernels/cpu/conv_winograd_choice.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cpuid.h>
#include <immintrin.h>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>

#include "kernels/cpu/dnnl_common.h"

namespace osprey::cpu {
namespace {

using dnnl::memory;

std::atomic<int64_t> g_trials{0};

std::mutex& choice_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::vector<int64_t>, bool>& choices() {
  static std::map<std::vector<int64_t>, bool> c;
  return c;
}

Buffer zeroed(size_t bytes) {
  Buffer b(std::max<size_t>(bytes, 64));
  std::memset(b.data(), 0, std::max<size_t>(bytes, 64));
  return b;
}

bool has_clflushopt() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23)) != 0;
}

__attribute__((target("clflushopt"))) void flush_lines_opt(const char* p, size_t bytes) {
  for (size_t i = 0; i < bytes; i += 64) _mm_clflushopt(const_cast<char*>(p + i));
}

// Evicts [data, data + bytes) from every cache level. clflushopt where the CPU has it: it
// does not wait for each line as clflush does (9.4 MiB of Winograd weights took ~9 ms a
// flush with clflush on an Ice Lake server).
void flush_lines(const void* data, size_t bytes) {
  static const bool opt = has_clflushopt();
  const char* p = static_cast<const char*>(data);
  if (opt) {
    flush_lines_opt(p, bytes);
  } else {
    for (size_t i = 0; i < bytes; i += 64) _mm_clflush(p + i);
  }
  _mm_mfence();
}

// One candidate: its primitive, the reorders the run path would add, and its buffers.
class Trial {
 public:
  Trial(const dnnl::convolution_forward::primitive_desc& pd, const ConvTrialIo& io,
        const Buffer& src, const Buffer& dst, const Buffer& bias)
      : prim_(pd), io_(io), src_(src), dst_(dst), bias_(bias) {
    src_md_ = pd.src_desc();
    dst_md_ = pd.dst_desc();
    scratch_md_ = pd.scratchpad_desc();
    if (src_md_ != io.src_plain) {
      src_reorder_ = make_reorder(io.src_plain, src_md_);
      src_buf_ = zeroed(src_md_.get_size());
    }
    if (dst_md_ != io.dst_plain) {
      dst_reorder_ = make_reorder(dst_md_, io.dst_plain);
      dst_buf_ = zeroed(dst_md_.get_size());
    }
    const memory::desc w_md = pd.weights_desc();
    w_bytes_ = w_md.get_size();
    w_buf_ = Buffer(w_bytes_);
    w_mem_ = wrap(w_md, w_buf_.data());
    if (w_md != io.w_plain) {
      run_reorder(make_reorder(io.w_plain, w_md), wrap(io.w_plain, io.weights), w_mem_);
    } else {
      std::memcpy(w_buf_.data(), io.weights, w_md.get_size());
    }
  }

  // In a model each layer's weights come from memory (ResNet50's do not fit the caches), so
  // each timed run starts with them flushed from the caches.
  double seconds() {
    flush_lines(w_buf_.data(), w_bytes_);
    const auto t0 = std::chrono::steady_clock::now();
    ExecArgs args;
    if (src_reorder_) {
      run_reorder(*src_reorder_, io_.src_plain, src_.data(), src_md_, src_buf_.data());
      args.add(arg(DNNL_ARG_SRC, src_md_, src_buf_.data()));
    } else {
      args.add(arg(DNNL_ARG_SRC, io_.src_plain, src_.data()));
    }
    args.add(arg(DNNL_ARG_WEIGHTS, w_mem_));
    args.add(dst_reorder_ ? arg(DNNL_ARG_DST, dst_md_, dst_buf_.data())
                          : arg(DNNL_ARG_DST, io_.dst_plain, dst_.data()));
    if (io_.has_bias) args.add(arg(DNNL_ARG_BIAS, io_.bias_md, bias_.data()));
    execute(prim_, args, scratch_md_);
    if (dst_reorder_) run_reorder(*dst_reorder_, dst_md_, dst_buf_.data(), io_.dst_plain, dst_.data());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  dnnl::convolution_forward prim_;
  const ConvTrialIo& io_;
  const Buffer &src_, &dst_, &bias_;
  memory::desc src_md_, dst_md_, scratch_md_;
  std::optional<dnnl::reorder> src_reorder_, dst_reorder_;
  Buffer src_buf_, dst_buf_, w_buf_;
  memory w_mem_;
  size_t w_bytes_ = 0;
};

}  // namespace

bool winograd_measured_faster(const dnnl::convolution_forward::primitive_desc& winograd,
                              const dnnl::convolution_forward::primitive_desc& direct,
                              const ConvTrialIo& io, const std::vector<int64_t>& key) {
  // One timing at a time: two sessions loading at once would time each other's contention.
  std::lock_guard<std::mutex> lock(choice_mutex());
  if (auto it = choices().find(key); it != choices().end()) return it->second;
  const Buffer src = zeroed(io.src_plain.get_size()), dst = zeroed(io.dst_plain.get_size()),
               bias = zeroed(io.has_bias ? io.bias_md.get_size() : 0);
  Trial w(winograd, io, src, dst, bias), d(direct, io, src, dst, bias);
  w.seconds();  // first touches of the buffers, the kernels' first runs
  d.seconds();
  double best_w = std::numeric_limits<double>::max(), best_d = best_w;
  for (int r = 0; r < kWinogradTrialRounds; ++r) {
    best_w = std::min(best_w, w.seconds());
    best_d = std::min(best_d, d.seconds());
    if (r + 1 >= kWinogradClearRounds && (best_w < kWinogradClearGap * best_d || best_d < kWinogradClearGap * best_w))
      break;
  }
  g_trials.fetch_add(1, std::memory_order_relaxed);
  const bool faster = best_w < kWinogradMargin * best_d;
  choices()[key] = faster;
  return faster;
}

int64_t winograd_trials_run() { return g_trials.load(std::memory_order_relaxed); }

}  // namespace osprey::cpu
