// Softmax and LogSoftmax (float32) on oneDNN's softmax primitives. The input is viewed as
// [outer, n, inner] by the reference's own ref::softmax_view (before opset 13 the trailing
// dims from `axis` are flattened into n; from opset 13 n is the one axis), and the primitive
// runs along n: as a 2-D [outer, n] problem when inner is 1 (the attention-scores case, on
// oneDNN's vectorized kernel), else along axis 1 of the 3-D view. Primitives are cached per
// view in the node's state. The reference softmax (engine/kernels/reference/softmax.cc) is the
// oracle in the tests.
#include "kernels/cpu/dnnl_common.h"
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
