#include "kernels/reference/qparam.h"

#include "kernels/reference/common.h"

namespace osprey::ref {

Status read_qparam(const KernelContext& ctx, const char* name, int s, int z, int tensor, DType fallback,
                   QParam* q) {
  if (!ctx.has_input(s)) return invalid_argument(name, "_scale (input ", s, ") is missing");
  const Tensor& st = ctx.input(s);
  if (st.dtype() != DType::kFloat32 || st.numel() != 1 || st.rank() > 1)
    return invalid_argument(name, "_scale (input ", s, ") must be one float32 value, got ", dtype_name(st.dtype()),
                            " ", shape_to_string(st.shape()));
  q->scale = st.data<float>()[0];
  q->zp = 0;
  q->type = tensor >= 0 ? ctx.input(tensor).dtype() : fallback;
  if (z >= 0 && ctx.has_input(z)) {
    const Tensor& zt = ctx.input(z);
    if (!is_8bit(zt.dtype()) || zt.numel() != 1 || zt.rank() > 1)
      return invalid_argument(name, "_zero_point (input ", z, ") must be one uint8 or int8 value, got ",
                              dtype_name(zt.dtype()), " ", shape_to_string(zt.shape()));
    if (tensor >= 0 && zt.dtype() != q->type)
      return invalid_argument(name, "_zero_point (input ", z, ") has type ", dtype_name(zt.dtype()), ", expected ",
                              dtype_name(q->type), " (input ", tensor, "'s type)");
    q->type = zt.dtype();
    q->zp = byte_at(zt, 0);
  }
  if (!is_8bit(q->type))
    return invalid_argument("input ", tensor >= 0 ? tensor : z, " has type ", dtype_name(q->type),
                            ", expected uint8 or int8");
  return Status::Ok();
}

Status require_inputs(const KernelContext& ctx, std::initializer_list<int> ids, const char* op) {
  for (int i : ids)
    if (!ctx.has_input(i)) return invalid_argument(op, ": input ", i, " is missing");
  return Status::Ok();
}

}  // namespace osprey::ref
