// Text and JSON formatting shared by the subcommands.
#pragma once

#include <string>
#include <string_view>

#include "osprey/session.h"
#include "osprey/tensor.h"

namespace osprey::cli {

// "float32[batch,3,224,224]", "float32[?]" (unknown rank), "seq(float32)[...]".
std::string format_info(const TensorInfo& info);
// "float32[1,3,224,224]".
std::string format_type(DType dtype, const Shape& shape);
// Value summary: "min=-0.99 max=0.98 mean=0.0012" for floats (NaN/Inf counted separately),
// "min=0 max=99" for integers, "true=12/24" for bool, "" when empty.
std::string value_summary(const Tensor& t);
// 1536 -> "1.5 KiB".
std::string format_bytes(double bytes);
// A JSON string literal (quoted, escaped).
std::string json_string(std::string_view s);
// A JSON number; non-finite values become null.
std::string json_number(double v);

}  // namespace osprey::cli
