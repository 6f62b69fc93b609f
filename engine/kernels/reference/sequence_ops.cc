// Sequence and Optional ops: Sequence{Empty,Construct,At,Insert,Erase,Length,Map},
// SplitToSequence, ConcatFromSequence, Optional, OptionalHasElement, OptionalGetElement.
#include "kernels/reference/common.h"
#include "kernels/reference/sequence_util.h"

namespace osprey::ref {

namespace {
Status require_sequence(const KernelContext& ctx, int i) {
  if (!ctx.has_input(i) || !ctx.input_value(i).is_sequence())
    return invalid_argument("input ", i, " must be a sequence");
  return Status::Ok();
}
// Position input (scalar int) normalized into [0, limit]; `inclusive_end` allows == size.
Status read_position(const KernelContext& ctx, int i, int64_t size, bool inclusive_end, int64_t* pos) {
  const Tensor& p = ctx.input(i);
  if (p.numel() != 1 || !dtype_is_integer(p.dtype()))
    return invalid_argument("position must be an integer scalar");
  int64_t v = p.get_as_int64(0);
  const int64_t hi = inclusive_end ? size : size - 1;
  if (v < -size || v > hi) return invalid_argument("position ", v, " is out of range for a sequence of ", size);
  *pos = v < 0 ? v + size : v;
  return Status::Ok();
}
}  // namespace

Status sequence_empty(KernelContext& ctx) {
  const DType dt = static_cast<DType>(ctx.attr_int("dtype", static_cast<int64_t>(DType::kFloat32)));
  if (!dtype_is_valid(dt)) return invalid_argument("SequenceEmpty dtype ", static_cast<int>(dt), " is invalid");
  ctx.set_output_value(0, Value::make_sequence({}, dt));
  return Status::Ok();
}

Status sequence_construct(KernelContext& ctx) {
  std::vector<Tensor> items;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor()) return invalid_argument("input ", i, " must be a tensor");
    if (ctx.input(i).dtype() != ctx.input(0).dtype()) return invalid_argument("SequenceConstruct inputs must share one type");
    items.push_back(ctx.input(i));
  }
  ctx.set_output_value(0, Value::make_sequence(std::move(items), items.empty() ? DType::kUndefined : items[0].dtype()));
  return Status::Ok();
}

Status sequence_at(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_sequence(ctx, 0));
  const auto& s = ctx.input_value(0).sequence;
  int64_t pos = 0;
  OSPREY_RETURN_IF_ERROR(read_position(ctx, 1, static_cast<int64_t>(s.size()), false, &pos));
  ctx.set_output(0, s[static_cast<size_t>(pos)]);
  return Status::Ok();
}

Status sequence_insert(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_sequence(ctx, 0));
  const Value& in = ctx.input_value(0);
  std::vector<Tensor> s = in.sequence;
  const Tensor& t = ctx.input(1);
  if (!s.empty() && s[0].dtype() != t.dtype()) return invalid_argument("tensor type differs from the sequence's");
  int64_t pos = static_cast<int64_t>(s.size());
  if (ctx.has_input(2)) OSPREY_RETURN_IF_ERROR(read_position(ctx, 2, pos, true, &pos));
  s.insert(s.begin() + pos, t);
  ctx.set_output_value(0, Value::make_sequence(std::move(s), t.dtype()));
  return Status::Ok();
}

Status sequence_erase(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_sequence(ctx, 0));
  const Value& in = ctx.input_value(0);
  std::vector<Tensor> s = in.sequence;
  if (s.empty()) return invalid_argument("cannot erase from an empty sequence");
  int64_t pos = static_cast<int64_t>(s.size()) - 1;
  if (ctx.has_input(1)) OSPREY_RETURN_IF_ERROR(read_position(ctx, 1, static_cast<int64_t>(s.size()), false, &pos));
  s.erase(s.begin() + pos);
  ctx.set_output_value(0, Value::make_sequence(std::move(s), in.sequence_dtype));
  return Status::Ok();
}

Status sequence_length(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_sequence(ctx, 0));
  ctx.set_output(0, Tensor::scalar<int64_t>(static_cast<int64_t>(ctx.input_value(0).sequence.size())));
  return Status::Ok();
}

Status split_to_sequence(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t axis = 0;
  OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", 0), x.rank(), &axis));
  const int64_t n = x.dim(axis);
  std::vector<int64_t> lengths;
  bool squeeze = false;
  if (!ctx.has_input(1)) {
    lengths.assign(static_cast<size_t>(n), 1);
    squeeze = ctx.attr_int("keepdims", 1) == 0;
  } else {
    const Tensor& sp = ctx.input(1);
    if (sp.rank() == 0) {
      const int64_t chunk = sp.get_as_int64(0);
      if (chunk <= 0) return invalid_argument("split size must be positive, got ", chunk);
      for (int64_t at = 0; at < n; at += chunk) lengths.push_back(std::min(chunk, n - at));
    } else {
      lengths = sp.to_int64_vector();
    }
  }
  OSPREY_ASSIGN_OR_RETURN(auto parts, seq::split(x, axis, lengths, ctx.max_elements()));
  if (squeeze)
    for (auto& p : parts) {
      Shape s = p.shape();
      s.erase(s.begin() + axis);
      p = p.reshaped(s);
    }
  ctx.set_output_value(0, Value::make_sequence(std::move(parts), x.dtype()));
  return Status::Ok();
}

Status concat_from_sequence(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_sequence(ctx, 0));
  const auto& s = ctx.input_value(0).sequence;
  if (s.empty()) return invalid_argument("ConcatFromSequence of an empty sequence");
  const bool new_axis = ctx.attr_int("new_axis", 0) != 0;
  if (!ctx.has_attr("axis")) return invalid_argument("ConcatFromSequence needs the axis attribute");
  int64_t axis = 0;
  OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", 0), s[0].rank() + (new_axis ? 1 : 0), &axis));
  OSPREY_ASSIGN_OR_RETURN(Tensor out, new_axis ? seq::stack(s, axis, ctx.max_elements())
                                               : seq::concat(s, axis, ctx.max_elements()));
  ctx.set_output(0, std::move(out));
  return Status::Ok();
}

Status sequence_map(KernelContext& ctx) {
  const ir::Graph* body = ctx.attr_graph("body");
  if (!body) return invalid_argument("SequenceMap has no body");
  OSPREY_RETURN_IF_ERROR(require_sequence(ctx, 0));
  const size_t n = ctx.input_value(0).sequence.size();
  for (int i = 1; i < ctx.num_inputs(); ++i)
    if (ctx.input_value(i).is_sequence() && ctx.input_value(i).sequence.size() != n)
      return invalid_argument("SequenceMap input ", i, " has ", ctx.input_value(i).sequence.size(),
                              " elements, input 0 has ", n);
  std::vector<std::vector<Tensor>> outs(static_cast<size_t>(ctx.num_outputs()));
  for (size_t k = 0; k < n; ++k) {
    std::vector<Value> in;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Value& v = ctx.input_value(i);
      in.emplace_back(v.is_sequence() ? v.sequence[k] : v.tensor);
    }
    OSPREY_ASSIGN_OR_RETURN(auto res, ctx.run_subgraph(*body, std::move(in)));
    if (res.size() != outs.size()) return invalid_argument("SequenceMap body output count differs from the node's");
    for (size_t o = 0; o < res.size(); ++o) {
      if (!res[o].is_tensor()) return invalid_argument("SequenceMap body outputs must be tensors");
      outs[o].push_back(std::move(res[o].tensor));
    }
  }
  for (size_t o = 0; o < outs.size(); ++o) {
    const ir::Value& decl = body->values[static_cast<size_t>(body->outputs[o])];
    ctx.set_output_value(static_cast<int>(o), Value::make_sequence(std::move(outs[o]), decl.type.dtype));
  }
  return Status::Ok();
}

Status optional(KernelContext& ctx) {
  ctx.set_output_value(0, ctx.has_input(0) ? ctx.input_value(0) : Value());
  return Status::Ok();
}

Status optional_has_element(KernelContext& ctx) {
  ctx.set_output(0, Tensor::scalar<bool>(ctx.has_input(0)));
  return Status::Ok();
}

Status optional_get_element(KernelContext& ctx) {
  if (!ctx.has_input(0)) return invalid_argument("OptionalGetElement of an empty optional");
  ctx.set_output_value(0, ctx.input_value(0));
  return Status::Ok();
}

}  // namespace osprey::ref
