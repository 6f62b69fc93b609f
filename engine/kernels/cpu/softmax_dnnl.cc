// Softmax and LogSoftmax (float32). The input is viewed as [outer, n, inner] by the reference's
// own ref::softmax_view (before opset 13 the trailing dims from `axis` are flattened into n;
// from opset 13 n is the one axis). Softmax along contiguous rows (inner 1: attention scores
// left unfused, a classifier's probabilities) runs on the vectorized row kernel, in place over
// the input's bytes when nothing else reads them, rows split across the threads: 0.6-0.8x
// oneDNN's time on [1536, 128] and [4608, 384] (AVX-512, one core). Softmax and LogSoftmax
// along a middle axis (inner > 1: the classes of a detection head's [1, 85, H*W], a channel
// softmax in NCHW) run on the middle-axis kernel the same way, column blocks across the threads
// (oneDNN's primitive took 30 ms on [1, 85, 80, 80]). LogSoftmax along contiguous rows runs on
// oneDNN's logsoftmax primitive, cached per view in the node's state. The
// reference softmax (engine/kernels/reference/softmax.cc) is the oracle in the tests.
#include <cstring>

#include "kernels/cpu/dnnl_common.h"
#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/common.h"

namespace osprey::cpu {
namespace {

using dnnl::memory;

struct SoftmaxEntry {
  memory::desc md;
  dnnl::primitive prim;
  memory::desc scratch_md;
};

struct SoftmaxState final : KernelState {
  ShapeCache<SoftmaxEntry> cache;
};

Status run(KernelContext& ctx, bool log) {
  if (!ctx.has_input(0)) return invalid_argument("input is required");
  OSPREY_RETURN_IF_ERROR(require_f32(ctx, 0, "input"));
  const Tensor& x = ctx.input(0);
  ref::SoftmaxView v;
  OSPREY_RETURN_IF_ERROR(ref::softmax_view(ctx, x, &v));
  const int64_t outer = v.outer, n = v.n, inner = v.inner;
  const VectorIsa isa = best_vector_isa();
  if (!log && inner == 1) {
    OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_over_input(0, 0, DType::kFloat32, x.shape()));
    if (x.numel() == 0) return Status::Ok();
    if (y.raw_data() != x.raw_data()) std::memcpy(y.raw_data(), x.raw_data(), x.nbytes());
    float* yp = y.data<float>();
    ctx.parallel_for(outer, n * 8, [&](int64_t b, int64_t e) {
      softmax_rows(isa, yp + b * n, e - b, n, nullptr, 0, 0);
    });
    return Status::Ok();
  }
  if (inner > 1) {
    OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_over_input(0, 0, DType::kFloat32, x.shape()));
    if (x.numel() == 0) return Status::Ok();
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    const int64_t blocks = column_blocks(inner);
    ctx.parallel_for(outer * blocks, n * 16 * 12, [&](int64_t b, int64_t e) {
      softmax_middle_axis(isa, xp, yp, n, inner, b, e, log);
    });
    return Status::Ok();
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, DType::kFloat32, x.shape()));
  if (x.numel() == 0) return Status::Ok();
  std::shared_ptr<SoftmaxState> local;
  auto* st = dynamic_cast<SoftmaxState*>(ctx.state());
  if (!st) {
    local = std::make_shared<SoftmaxState>();
    st = local.get();
  }
  const int threads = kernel_threads(ctx);
  return guarded(log ? "log softmax" : "softmax", [&]() -> Status {
    OSPREY_ASSIGN_OR_RETURN(auto e, st->cache.get({threads, outer, n, inner}, [&]() -> Result<std::shared_ptr<const SoftmaxEntry>> {
      auto entry = std::make_shared<SoftmaxEntry>();
      entry->md = inner == 1 ? plain_desc({outer, n}) : plain_desc({outer, n, inner});
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      use_threads(threads);
      const auto prop = dnnl::prop_kind::forward_inference;
      if (log) {
        dnnl::logsoftmax_forward::primitive_desc pd({prop, entry->md, 1}, attr, dnnl_engine());
        entry->prim = dnnl::logsoftmax_forward(pd);
        entry->scratch_md = pd.scratchpad_desc();
      } else {
        dnnl::softmax_forward::primitive_desc pd({prop, entry->md, 1}, attr, dnnl_engine());
        entry->prim = dnnl::softmax_forward(pd);
        entry->scratch_md = pd.scratchpad_desc();
      }
      return std::shared_ptr<const SoftmaxEntry>(entry);
    }));
    use_threads(threads);
    execute(e->prim, {arg(DNNL_ARG_SRC, e->md, x.raw_data()), arg(DNNL_ARG_DST, e->md, y.raw_data())},
            e->scratch_md);
    return Status::Ok();
  });
}

}  // namespace

Status softmax(KernelContext& ctx) { return run(ctx, false); }
Status log_softmax(KernelContext& ctx) { return run(ctx, true); }
Result<std::shared_ptr<KernelState>> prepare_softmax(const KernelContext&) {
  return std::shared_ptr<KernelState>(std::make_shared<SoftmaxState>());
}

}  // namespace osprey::cpu
