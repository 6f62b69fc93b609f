// Identity and control flow: If, Loop, Scan.
#include "kernels/reference/common.h"

namespace osprey::ref {

Status identity(KernelContext& ctx) {
  ctx.set_output_value(0, ctx.input_value(0));
  return Status::Ok();
}

}  // namespace osprey::ref
