// Identity and control flow: If, Loop, Scan (subgraphs run through KernelContext).
#include <algorithm>

#include "kernels/reference/common.h"
#include "kernels/reference/sequence_util.h"

namespace osprey::ref {

Status identity(KernelContext& ctx) {
  ctx.set_output_value(0, ctx.input_value(0));
  return Status::Ok();
}

namespace {
Status read_bool_scalar(const Tensor& t, const char* what, bool* out) {
  if (t.numel() != 1) return invalid_argument(what, " must hold one element, got shape ", shape_to_string(t.shape()));
  if (t.dtype() != DType::kBool) return invalid_argument(what, " must be bool, got ", dtype_name(t.dtype()));
  *out = t.data<bool>()[0];
  return Status::Ok();
}

// Stacks per-iteration values along a new axis 0 (or appends, for sequence-valued
// scan outputs). `declared` gives the shape to use when there were no iterations.
Result<Value> stack_iterations(std::vector<Value>& per_iter, const ir::Value& declared, int64_t max_elements) {
  if (per_iter.empty()) {
    if (declared.type.kind == ir::ValueType::Kind::kSequence) return Value::make_sequence({}, declared.type.dtype);
    Shape shape{0};
    for (const Dim& d : declared.type.shape) shape.push_back(d.is_fixed() ? d.value : 0);
    const DType dt = declared.type.dtype == DType::kUndefined ? DType::kFloat32 : declared.type.dtype;
    OSPREY_ASSIGN_OR_RETURN(Tensor t, Tensor::create(dt, shape, max_elements));
    return Value(std::move(t));
  }
  if (!per_iter[0].is_tensor()) return unimplemented("scan outputs that are not tensors");
  std::vector<Tensor> parts;
  for (auto& v : per_iter) {
    if (!v.is_tensor()) return invalid_argument("scan output changes kind between iterations");
    parts.push_back(v.tensor);
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor t, seq::stack(parts, 0, max_elements));
  return Value(std::move(t));
}
}  // namespace

Status if_op(KernelContext& ctx) {
  bool cond = false;
  OSPREY_RETURN_IF_ERROR(read_bool_scalar(ctx.input(0), "If condition", &cond));
  const ir::Graph* branch = ctx.attr_graph(cond ? "then_branch" : "else_branch");
  if (!branch) return invalid_argument("If has no ", cond ? "then_branch" : "else_branch");
  OSPREY_ASSIGN_OR_RETURN(auto outs, ctx.run_subgraph(*branch, {}));
  if (static_cast<int>(outs.size()) != ctx.num_outputs())
    return invalid_argument("If branch returns ", outs.size(), " values, the node has ", ctx.num_outputs(), " outputs");
  for (size_t i = 0; i < outs.size(); ++i) ctx.set_output_value(static_cast<int>(i), std::move(outs[i]));
  return Status::Ok();
}

Status loop(KernelContext& ctx) {
  const ir::Graph* body = ctx.attr_graph("body");
  if (!body) return invalid_argument("Loop has no body");
  int64_t max_trips = -1;  // -1: unbounded
  if (ctx.has_input(0)) {
    if (ctx.input(0).numel() != 1) return invalid_argument("Loop M must hold one element");
    max_trips = ctx.input(0).get_as_int64(0);
  }
  bool cond = true;
  if (ctx.has_input(1)) OSPREY_RETURN_IF_ERROR(read_bool_scalar(ctx.input(1), "Loop cond", &cond));
  const int n_carried = ctx.num_inputs() - 2;
  const int n_scan = ctx.num_outputs() - n_carried;
  if (n_carried < 0 || n_scan < 0) return invalid_argument("Loop has more loop-carried inputs than outputs");
  if (static_cast<int>(body->inputs.size()) != 2 + n_carried)
    return invalid_argument("Loop body takes ", body->inputs.size(), " inputs, expected ", 2 + n_carried);
  if (static_cast<int>(body->outputs.size()) != 1 + n_carried + n_scan)
    return invalid_argument("Loop body returns ", body->outputs.size(), " values, expected ", 1 + n_carried + n_scan);
  std::vector<Value> carried;
  for (int i = 0; i < n_carried; ++i) carried.push_back(ctx.input_value(2 + i));
  std::vector<std::vector<Value>> scans(static_cast<size_t>(n_scan));
  if (max_trips < 0 && !ctx.has_input(1)) return invalid_argument("Loop without M or cond would never end");
  for (int64_t it = 0; cond && (max_trips < 0 || it < max_trips); ++it) {
    std::vector<Value> in;
    in.emplace_back(Tensor::scalar<int64_t>(it));
    in.emplace_back(Tensor::scalar<bool>(cond));
    for (auto& c : carried) in.push_back(c);
    OSPREY_ASSIGN_OR_RETURN(auto out, ctx.run_subgraph(*body, std::move(in)));
    if (!out[0].is_tensor()) return invalid_argument("Loop body's condition output is not a tensor");
    OSPREY_RETURN_IF_ERROR(read_bool_scalar(out[0].tensor, "Loop body condition", &cond));
    for (int i = 0; i < n_carried; ++i) carried[static_cast<size_t>(i)] = std::move(out[static_cast<size_t>(1 + i)]);
    for (int i = 0; i < n_scan; ++i) scans[static_cast<size_t>(i)].push_back(std::move(out[static_cast<size_t>(1 + n_carried + i)]));
  }
  for (int i = 0; i < n_carried; ++i) ctx.set_output_value(i, std::move(carried[static_cast<size_t>(i)]));
  for (int i = 0; i < n_scan; ++i) {
    const ir::Value& decl = body->values[static_cast<size_t>(body->outputs[static_cast<size_t>(1 + n_carried + i)])];
    OSPREY_ASSIGN_OR_RETURN(Value v, stack_iterations(scans[static_cast<size_t>(i)], decl, ctx.max_elements()));
    ctx.set_output_value(n_carried + i, std::move(v));
  }
  return Status::Ok();
}

namespace {
// Scan (opset >= 9) over one batch: states + scan inputs -> final states + scan outputs.
Status scan_core(KernelContext& ctx, const ir::Graph& body, std::vector<Tensor> states,
                 const std::vector<Tensor>& scan_in, std::vector<Tensor>* out) {
  const size_t n_state = states.size(), n_in = scan_in.size();
  const size_t n_out = body.outputs.size() - n_state;
  auto in_axes = ctx.attr_ints("scan_input_axes", std::vector<int64_t>(n_in, 0));
  auto in_dirs = ctx.attr_ints("scan_input_directions", std::vector<int64_t>(n_in, 0));
  auto out_axes = ctx.attr_ints("scan_output_axes", std::vector<int64_t>(n_out, 0));
  auto out_dirs = ctx.attr_ints("scan_output_directions", std::vector<int64_t>(n_out, 0));
  if (in_axes.size() != n_in || in_dirs.size() != n_in || out_axes.size() != n_out || out_dirs.size() != n_out)
    return invalid_argument("Scan axes/directions attributes do not match the number of scan inputs/outputs");
  int64_t steps = -1;
  for (size_t i = 0; i < n_in; ++i) {
    OSPREY_RETURN_IF_ERROR(normalize_axis(in_axes[i], scan_in[i].rank(), &in_axes[i], "scan_input_axes"));
    const int64_t len = scan_in[i].dim(in_axes[i]);
    if (steps >= 0 && len != steps) return invalid_argument("Scan inputs have different lengths: ", steps, " and ", len);
    steps = len;
  }
  if (steps < 0) steps = 0;
  std::vector<std::vector<Tensor>> slices(n_out);
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<Value> in;
    for (auto& s : states) in.emplace_back(s);
    for (size_t i = 0; i < n_in; ++i) {
      const int64_t idx = in_dirs[i] ? steps - 1 - t : t;
      OSPREY_ASSIGN_OR_RETURN(Tensor sl, seq::take(scan_in[i], in_axes[i], idx, ctx.max_elements()));
      in.emplace_back(std::move(sl));
    }
    OSPREY_ASSIGN_OR_RETURN(auto res, ctx.run_subgraph(body, std::move(in)));
    for (auto& r : res)
      if (!r.is_tensor()) return invalid_argument("Scan body outputs must be tensors");
    for (size_t i = 0; i < n_state; ++i) states[i] = res[i].tensor;
    for (size_t i = 0; i < n_out; ++i) slices[i].push_back(res[n_state + i].tensor);
  }
  out->clear();
  for (auto& s : states) out->push_back(s);
  for (size_t i = 0; i < n_out; ++i) {
    if (out_dirs[i]) std::reverse(slices[i].begin(), slices[i].end());
    if (slices[i].empty()) return unimplemented("Scan with zero iterations");
    int64_t axis = out_axes[i];
    OSPREY_RETURN_IF_ERROR(normalize_axis(axis, slices[i][0].rank() + 1, &axis, "scan_output_axes"));
    OSPREY_ASSIGN_OR_RETURN(Tensor st, seq::stack(slices[i], axis, ctx.max_elements()));
    out->push_back(std::move(st));
  }
  return Status::Ok();
}
}  // namespace

Status scan(KernelContext& ctx) {
  const ir::Graph* body = ctx.attr_graph("body");
  if (!body) return invalid_argument("Scan has no body");
  const int64_t n_in = ctx.attr_int("num_scan_inputs", -1);
  const int first = ctx.opset() < 9 ? 1 : 0;  // opset 8: input 0 is sequence_lens
  const int64_t n_state = ctx.num_inputs() - first - n_in;
  if (n_in < 1 || n_state < 0) return invalid_argument("Scan num_scan_inputs is ", n_in, " for ", ctx.num_inputs(), " inputs");
  if (body->inputs.size() != static_cast<size_t>(n_state + n_in))
    return invalid_argument("Scan body takes ", body->inputs.size(), " inputs, expected ", n_state + n_in);
  if (body->outputs.size() < static_cast<size_t>(n_state) || static_cast<int64_t>(ctx.num_outputs()) != static_cast<int64_t>(body->outputs.size()))
    return invalid_argument("Scan outputs do not match its body's outputs");
  std::vector<Tensor> states, scans;
  for (int i = first; i < ctx.num_inputs(); ++i)
    if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor()) return invalid_argument("Scan input ", i, " must be a tensor");
  for (int64_t i = 0; i < n_state; ++i) states.push_back(ctx.input(first + static_cast<int>(i)));
  for (int64_t i = 0; i < n_in; ++i) scans.push_back(ctx.input(first + static_cast<int>(n_state + i)));
  std::vector<Tensor> out;
  if (ctx.opset() >= 9) {
    OSPREY_RETURN_IF_ERROR(scan_core(ctx, *body, states, scans, &out));
  } else {
    // Opset 8: every input has a leading batch axis; scan axis is 1; run batch by batch.
    if (ctx.has_input(0)) return unimplemented("Scan-8 with sequence_lens");
    for (const auto* group : {&states, &scans})
      for (const Tensor& t : *group)
        if (t.rank() < 1) return invalid_argument("Scan-8 inputs need a leading batch axis");
    const int64_t batch = states.empty() ? scans[0].dim(0) : states[0].dim(0);
    for (const auto* group : {&states, &scans})
      for (const Tensor& t : *group)
        if (t.dim(0) != batch) return invalid_argument("Scan-8 inputs disagree on the batch size");
    std::vector<std::vector<Tensor>> per_batch;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Tensor> st, sc, o;
      for (auto& s : states) { OSPREY_ASSIGN_OR_RETURN(Tensor x, seq::take(s, 0, b, ctx.max_elements())); st.push_back(x); }
      for (auto& s : scans) { OSPREY_ASSIGN_OR_RETURN(Tensor x, seq::take(s, 0, b, ctx.max_elements())); sc.push_back(x); }
      OSPREY_RETURN_IF_ERROR(scan_core(ctx, *body, st, sc, &o));
      per_batch.push_back(std::move(o));
    }
    for (size_t i = 0; i < body->outputs.size(); ++i) {
      std::vector<Tensor> parts;
      for (auto& pb : per_batch) parts.push_back(pb[i]);
      OSPREY_ASSIGN_OR_RETURN(Tensor st, seq::stack(parts, 0, ctx.max_elements()));
      out.push_back(std::move(st));
    }
  }
  for (size_t i = 0; i < out.size(); ++i) ctx.set_output(static_cast<int>(i), std::move(out[i]));
  return Status::Ok();
}

}  // namespace osprey::ref
