#include "kernels/kernel.h"

namespace osprey {

const ir::Attribute* KernelContext::typed_attr(const std::string& name, ir::Attribute::Type t) const {
  const auto* a = node_.find_attribute(name);
  if (!a) return nullptr;
  if (a->type != t) {
    if (attr_error_.empty())
      attr_error_ = str_cat("attribute '", name, "' must be ", ir::attribute_type_name(t), ", got ",
                            ir::attribute_type_name(a->type));
    return nullptr;
  }
  return a;
}

using T = ir::Attribute::Type;

int64_t KernelContext::attr_int(const std::string& name, int64_t def) const {
  const auto* a = typed_attr(name, T::kInt);
  return a ? a->i : def;
}
float KernelContext::attr_float(const std::string& name, float def) const {
  const auto* a = typed_attr(name, T::kFloat);
  return a ? a->f : def;
}
std::string KernelContext::attr_string(const std::string& name, const std::string& def) const {
  const auto* a = typed_attr(name, T::kString);
  return a ? a->s : def;
}
std::vector<int64_t> KernelContext::attr_ints(const std::string& name, std::vector<int64_t> def) const {
  const auto* a = typed_attr(name, T::kInts);
  return a ? a->ints : def;
}
std::vector<float> KernelContext::attr_floats(const std::string& name, std::vector<float> def) const {
  const auto* a = typed_attr(name, T::kFloats);
  return a ? a->floats : def;
}
std::vector<std::string> KernelContext::attr_strings(const std::string& name,
                                                     std::vector<std::string> def) const {
  const auto* a = typed_attr(name, T::kStrings);
  return a ? a->strings : def;
}
const Tensor* KernelContext::attr_tensor(const std::string& name) const {
  const auto* a = typed_attr(name, T::kTensor);
  return a && a->t.defined() ? &a->t : nullptr;
}
const ir::Graph* KernelContext::attr_graph(const std::string& name) const {
  const auto* a = typed_attr(name, T::kGraph);
  return a ? a->g.get() : nullptr;
}

}  // namespace osprey
