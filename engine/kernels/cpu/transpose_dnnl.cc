// Transpose (float32, and uint8 / int8: a QDQ model's quantized values at a channels-last
// boundary) as a oneDNN reorder: the source is described with the output's dims and the
// input's strides taken in `perm` order, the destination is the plain output, so the reorder
// writes the permuted tensor with oneDNN's vectorized, multi-threaded copy kernels
// (NCHW <-> NHWC at a channels-last boundary, the head transposes of attention). Reorders are
// cached per input shape in the node's state. Moving the channels of a tensor with at most
// kInterleaveMaxPlanes of them to the last axis ([N, C, spatial...] -> [N, spatial..., C], a
// CNN's RGB input entering the channels-last layout) runs on interleave_planes instead
// (row_kernels.h), about four times faster than the reorder there. A float32 permutation that
// is a batched 2-D transpose once its axes are merged ([B, M, N] -> [B, N, M]) runs on 8 x 8
// register tiles (transpose_tiles.h). Semantics and errors are
// the reference Transpose's (engine/kernels/reference/layout_ops.cc), which is its oracle in
// the tests.
#include "kernels/cpu/transpose_dnnl.h"

#include <algorithm>

#include "kernels/cpu/dnnl_common.h"
#include "kernels/cpu/row_kernels.h"
#include "kernels/cpu/transpose_tiles.h"
#include "kernels/reference/common.h"

namespace osprey::cpu {
namespace {

using dnnl::memory;

struct TransposeEntry {
  memory::desc src, dst;
  dnnl::reorder prim;
};

struct TransposeState final : KernelState {
  ShapeCache<TransposeEntry> cache;
};

// Whether perm moves axis 1 of a rank-r tensor (r >= 3) to the end and keeps the others in
// order: [0, 2, 3, ..., r - 1, 1].
bool channels_to_last(const std::vector<int64_t>& perm) {
  const size_t r = perm.size();
  if (r < 3 || perm[0] != 0 || perm[r - 1] != 1) return false;
  for (size_t i = 1; i + 1 < r; ++i)
    if (perm[i] != static_cast<int64_t>(i) + 1) return false;
  return true;
}

// x [N, C, P...] -> y [N, P..., C] by interleave_planes, the pixels split across the pool.
void interleave_images(const Tensor& x, Tensor& y, ThreadPool* pool) {
  const int64_t N = x.dim(0), C = x.dim(1), plane = x.numel() / (N * C);
  const float* src = x.data<float>();
  float* dst = y.data<float>();
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t n = b / plane; n < N && n * plane < e; ++n) {
      const int64_t lo = std::max(b, n * plane) - n * plane;
      const int64_t hi = std::min(e, (n + 1) * plane) - n * plane;
      interleave_planes(best_vector_isa(), src + n * C * plane, dst + n * C * plane, C, plane, lo,
                        hi);
    }
  };
  if (pool)
    pool->parallel_for(N * plane, C, body);
  else
    body(0, N * plane);
}

}  // namespace

bool transpose_interleaves(const Shape& x, const std::vector<int64_t>& perm) {
  return perm.size() == x.size() && channels_to_last(perm) && x[1] <= kInterleaveMaxPlanes;
}

Status transpose(KernelContext& ctx) {
  if (!ctx.has_input(0)) return invalid_argument("input X is required");
  const Tensor& x = ctx.input(0);
  const DType t = x.dtype();
  if (t != DType::kFloat32 && t != DType::kUInt8 && t != DType::kInt8)
    return invalid_argument("X has type ", dtype_name(t), "; this kernel takes float32, uint8 or int8");
  const memory::data_type dt = t == DType::kFloat32 ? memory::data_type::f32
                               : t == DType::kUInt8 ? memory::data_type::u8
                                                    : memory::data_type::s8;
  const int64_t r = x.rank();
  std::vector<int64_t> perm;
  OSPREY_RETURN_IF_ERROR(ref::transpose_perm(ctx, r, &perm));
  Shape out(static_cast<size_t>(r));
  for (size_t i = 0; i < out.size(); ++i) out[i] = x.shape()[static_cast<size_t>(perm[i])];
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, t, out));
  if (y.numel() == 0) return Status::Ok();
  if (r == 0 || r > DNNL_MAX_NDIMS) {  // a scalar, or more dims than oneDNN describes
    OSPREY_ASSIGN_OR_RETURN(Tensor t, ref::transposed(x, perm));
    ctx.set_output(0, std::move(t));
    return Status::Ok();
  }
  if (t == DType::kFloat32 && transpose_interleaves(x.shape(), perm)) {
    interleave_images(x, y, ctx.pool());
    return Status::Ok();
  }
  int64_t batch = 0, m = 0, n = 0;
  if (t == DType::kFloat32 && transpose_tiles_supported() && batched_transpose_view(x.shape(), perm, &batch, &m, &n)) {
    batched_transpose(x.data<float>(), y.data<float>(), batch, m, n, ctx.pool());
    return Status::Ok();
  }
  std::shared_ptr<TransposeState> local;
  auto* st = dynamic_cast<TransposeState*>(ctx.state());
  if (!st) {
    local = std::make_shared<TransposeState>();
    st = local.get();
  }
  const int threads = kernel_threads(ctx);
  thread_local std::vector<int64_t> key;  // reused: no heap once warm
  key.assign({threads, static_cast<int64_t>(t), -1});
  key.insert(key.end(), x.shape().begin(), x.shape().end());
  key.push_back(-1);
  key.insert(key.end(), perm.begin(), perm.end());
  return guarded("transpose", [&]() -> Status {
    OSPREY_ASSIGN_OR_RETURN(auto e, st->cache.get(key, [&]() -> Result<std::shared_ptr<const TransposeEntry>> {
      const std::vector<int64_t> in_strides = ref::strides_of(x.shape());
      memory::dims dims(out.begin(), out.end()), strides(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) strides[i] = in_strides[static_cast<size_t>(perm[i])];
      auto entry = std::make_shared<TransposeEntry>();
      entry->src = memory::desc(dims, dt, strides);
      entry->dst = plain_desc(dims, dt);
      use_threads(threads);
      entry->prim = make_reorder(entry->src, entry->dst);
      return std::shared_ptr<const TransposeEntry>(entry);
    }));
    use_threads(threads);
    run_reorder(e->prim, e->src, x.raw_data(), e->dst, y.raw_data());
    return Status::Ok();
  });
}

Result<std::shared_ptr<KernelState>> prepare_transpose(const KernelContext&) {
  return std::shared_ptr<KernelState>(std::make_shared<TransposeState>());
}

}  // namespace osprey::cpu
