// Einsum of two float32 operands that is a batched matrix product ("bhid,bhjd->bhij",
// "bij,bjk->bik", "ij,jk->ik", "bnd,md->bnm"...): each label is a batch label (in both operands
// and the output), a row label (A and the output), a column label (B and the output) or a
// contracted label (A and B only). The operands and the output are described to oneDNN's
// matmul as [batch, rows, contraction] / [batch, contraction, columns] / [batch, rows, columns]
// with their own strides wherever each group's labels sit next to each other in order (the
// usual case: no copy), else copied into that order first. The reference Einsum (general:
// diagonals, ellipses, single-operand sums) took 28 ms on an attention-score Einsum of
// [1, 12, 128, 64] operands, onnxruntime 0.31; it runs every other form, and is the oracle of
// the tests (within float rounding: the sums' order differs).
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/dnnl_common.h"
#include "kernels/reference/common.h"
#include "kernels/reference/tensor_ops_util.h"

namespace osprey::ref {
Status einsum(KernelContext& ctx);  // reference/linalg.cc
}  // namespace osprey::ref

namespace osprey::cpu {
namespace {

using dnnl::memory;

// An operand (or the output) as three merged dims over its own strides, or false when a
// group's labels are not adjacent and in order in it.
bool group_view(const std::string& labels, const Shape& shape, const std::vector<int64_t>& strides,
                const std::string groups[3], memory::dims* dims, memory::dims* st) {
  dims->assign(3, 1);
  st->assign(3, 1);
  for (int g = 0; g < 3; ++g) {
    const std::string& grp = groups[g];
    if (grp.empty()) continue;
    const size_t first = labels.find(grp[0]);
    if (first == std::string::npos || labels.compare(first, grp.size(), grp) != 0) return false;
    int64_t size = 1;
    for (size_t i = 0; i < grp.size(); ++i) size *= shape[first + i];
    (*dims)[static_cast<size_t>(g)] = size;
    (*st)[static_cast<size_t>(g)] = strides[first + grp.size() - 1];
  }
  // Merged dims must be dense within themselves: each label's stride is the next one's times
  // its size.
  for (int g = 0; g < 3; ++g) {
    const std::string& grp = groups[g];
    if (grp.size() < 2) continue;
    const size_t first = labels.find(grp[0]);
    for (size_t i = 0; i + 1 < grp.size(); ++i)
      if (strides[first + i] != strides[first + i + 1] * shape[first + i + 1]) return false;
  }
  // Size-1 groups: any stride oneDNN accepts for them (the dense one).
  if ((*dims)[2] == 1) (*st)[2] = 1;
  if ((*dims)[1] == 1) (*st)[1] = (*dims)[2] * (*st)[2];
  if ((*dims)[0] == 1) (*st)[0] = (*dims)[1] * (*st)[1];
  return true;
}

// The operand's values copied into the order of `groups` (a dense [g0, g1, g2] tensor).
Tensor gathered(const Tensor& t, const std::string& labels, const std::string groups[3]) {
  const std::string order = groups[0] + groups[1] + groups[2];
  const std::vector<int64_t> in_strides = ref::strides_of(t.shape());
  Shape shape;
  std::vector<int64_t> strides;
  for (char c : order) {
    const size_t p = labels.find(c);
    shape.push_back(t.shape()[p]);
    strides.push_back(in_strides[p]);
  }
  Tensor out(DType::kFloat32, shape);
  ref::tensor_ops::copy_strided<ref::tensor_ops::RawElem<4>>(out.raw_data(), t.raw_data(), 0, shape, strides);
  return out;
}

struct EinsumEntry {
  memory::desc a, b, y;
  dnnl::matmul prim;
  memory::desc scratch;
};

struct EinsumState final : KernelState {
  ShapeCache<EinsumEntry> cache;
};

// The equation's labels: A's, B's and the output's, or false for forms this kernel leaves to
// the reference (ellipses, repeated labels, labels summed within one operand, one operand).
bool parse(std::string eq, std::string* a, std::string* b, std::string* out) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const size_t arrow = eq.find("->"), comma = eq.find(',');
  if (arrow == std::string::npos || comma == std::string::npos || comma > arrow) return false;
  *a = eq.substr(0, comma);
  *b = eq.substr(comma + 1, arrow - comma - 1);
  *out = eq.substr(arrow + 2);
  for (const std::string* s : {a, b, out}) {
    for (size_t i = 0; i < s->size(); ++i) {
      const char c = (*s)[i];
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
      if (s->find(c, i + 1) != std::string::npos) return false;
    }
  }
  for (char c : *a)
    if (b->find(c) == std::string::npos && out->find(c) == std::string::npos) return false;
  for (char c : *b)
    if (a->find(c) == std::string::npos && out->find(c) == std::string::npos) return false;
  for (char c : *out)
    if (a->find(c) == std::string::npos && b->find(c) == std::string::npos) return false;
  return true;
}

}  // namespace

Status einsum(KernelContext& ctx) {
  std::string la, lb, lo;
  if (ctx.num_inputs() != 2 || !ctx.has_input(0) || !ctx.has_input(1) || !ctx.input_value(0).is_tensor() ||
      !ctx.input_value(1).is_tensor() || ctx.input(0).dtype() != DType::kFloat32 ||
      ctx.input(1).dtype() != DType::kFloat32 || !parse(ctx.attr_string("equation", ""), &la, &lb, &lo))
    return ref::einsum(ctx);
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.rank() != static_cast<int64_t>(la.size()) || b.rank() != static_cast<int64_t>(lb.size()))
    return ref::einsum(ctx);  // its error
  // Groups, in the output's order: batch, rows, columns; the contraction in A's order.
  std::string batch, rows, cols, sum;
  for (char c : lo) {
    const bool in_a = la.find(c) != std::string::npos, in_b = lb.find(c) != std::string::npos;
    (in_a && in_b ? batch : in_a ? rows : cols) += c;
  }
  for (char c : la)
    if (lb.find(c) != std::string::npos && lo.find(c) == std::string::npos) sum += c;
  auto dim = [](const std::string& labels, const Tensor& t, char c) { return t.dim(static_cast<int64_t>(labels.find(c))); };
  for (char c : batch + sum)
    if (dim(la, a, c) != dim(lb, b, c)) return ref::einsum(ctx);  // broadcasting or a mismatch
  Shape out_shape;
  for (char c : lo) out_shape.push_back(la.find(c) != std::string::npos ? dim(la, a, c) : dim(lb, b, c));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, DType::kFloat32, out_shape));
  if (y.numel() == 0) return Status::Ok();
  int64_t k_size = 1;
  for (char c : sum) k_size *= dim(la, a, c);
  if (k_size == 0) {
    std::fill(y.data<float>(), y.data<float>() + y.numel(), 0.0f);
    return Status::Ok();
  }
  const std::string ga[3] = {batch, rows, sum}, gb[3] = {batch, sum, cols}, gy[3] = {batch, rows, cols};
  memory::dims a_dims, a_st, b_dims, b_st, y_dims, y_st;
  Tensor a_use = a, b_use = b;
  if (!group_view(la, a.shape(), ref::strides_of(a.shape()), ga, &a_dims, &a_st)) {
    a_use = gathered(a, la, ga);
    group_view(batch + rows + sum, a_use.shape(), ref::strides_of(a_use.shape()), ga, &a_dims, &a_st);
  }
  if (!group_view(lb, b.shape(), ref::strides_of(b.shape()), gb, &b_dims, &b_st)) {
    b_use = gathered(b, lb, gb);
    group_view(batch + sum + cols, b_use.shape(), ref::strides_of(b_use.shape()), gb, &b_dims, &b_st);
  }
  // The output in [batch, rows, columns] order: y itself when its labels group so, else a
  // dense buffer permuted into y afterwards.
  Tensor natural;
  const bool direct = group_view(lo, y.shape(), ref::strides_of(y.shape()), gy, &y_dims, &y_st);
  if (!direct) {
    Shape ns;
    for (char c : batch + rows + cols) ns.push_back(out_shape[lo.find(c)]);
    natural = Tensor(DType::kFloat32, ns);
    group_view(batch + rows + cols, ns, ref::strides_of(ns), gy, &y_dims, &y_st);
  }
  std::shared_ptr<EinsumState> local;
  auto* st = dynamic_cast<EinsumState*>(ctx.state());
  if (!st) {
    local = std::make_shared<EinsumState>();
    st = local.get();
  }
  const int threads = kernel_threads(ctx);
  memory::dims key = {threads};
  for (const memory::dims* d : {&a_dims, &a_st, &b_dims, &b_st, &y_dims, &y_st}) key.insert(key.end(), d->begin(), d->end());
  OSPREY_RETURN_IF_ERROR(guarded("einsum", [&]() -> Status {
    OSPREY_ASSIGN_OR_RETURN(auto e, st->cache.get(key, [&]() -> Result<std::shared_ptr<const EinsumEntry>> {
      auto entry = std::make_shared<EinsumEntry>();
      entry->a = memory::desc(a_dims, memory::data_type::f32, a_st);
      entry->b = memory::desc(b_dims, memory::data_type::f32, b_st);
      entry->y = memory::desc(y_dims, memory::data_type::f32, y_st);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      use_threads(threads);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(entry->a, entry->b, entry->y), attr, dnnl_engine());
      entry->prim = dnnl::matmul(pd);
      entry->scratch = pd.scratchpad_desc();
      return std::shared_ptr<const EinsumEntry>(entry);
    }));
    use_threads(threads);
    execute(e->prim,
            {arg(DNNL_ARG_SRC, e->a, a_use.raw_data()), arg(DNNL_ARG_WEIGHTS, e->b, b_use.raw_data()),
             arg(DNNL_ARG_DST, e->y, direct ? y.raw_data() : natural.raw_data())},
            e->scratch);
    return Status::Ok();
  }));
  if (!direct) {
    const std::string nat = batch + rows + cols;
    const std::vector<int64_t> ns = ref::strides_of(natural.shape());
    std::vector<int64_t> strides;
    for (char c : lo) strides.push_back(ns[nat.find(c)]);
    ref::tensor_ops::copy_strided<ref::tensor_ops::RawElem<4>>(y.raw_data(), natural.raw_data(), 0, y.shape(), strides);
  }
  return Status::Ok();
}

Result<std::shared_ptr<KernelState>> prepare_einsum(const KernelContext&) {
  return std::shared_ptr<KernelState>(std::make_shared<EinsumState>());
}

}  // namespace osprey::cpu
