// Loads arbitrary bytes as a model and, when it loads, runs it once on zero-filled
// inputs (symbolic dims = 1). Reaches the kernels' input validation.
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto session = osprey::fuzz::load(data, size);
  if (!session.ok()) return 0;
  std::vector<osprey::NamedValue> inputs;
  for (const auto& info : (*session)->inputs()) {
    if (info.is_sequence || info.is_optional || info.dtype == osprey::DType::kUndefined) return 0;
    osprey::Shape shape;
    for (const auto& d : info.shape) shape.push_back(d.is_fixed() ? d.value : 1);
    auto t = osprey::Tensor::create(info.dtype, shape, osprey::fuzz::fuzz_options().max_tensor_elements);
    if (!t.ok()) return 0;
    inputs.emplace_back(info.name, osprey::Value(std::move(t.value())));
  }
  (void)(*session)->run_values(inputs);
  return 0;
}
