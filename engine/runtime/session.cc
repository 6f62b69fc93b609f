#include "osprey/session.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "kernels/registry.h"
#include "onnx/onnx_import.h"
#include "passes/graph_dump.h"
#include "passes/pass_manager.h"
#include "runtime/batch_split.h"
#include "runtime/executor.h"
#include "runtime/packed_constants.h"
#include "runtime/run_memory.h"
#include "threading/cpu_info.h"
#include "threading/thread_pool.h"

namespace osprey {

std::string Dim::to_string() const {
  if (is_fixed()) return std::to_string(value);
  return symbol.empty() ? "?" : symbol;
}

std::string TensorInfo::to_string() const {
  std::string s = str_cat(name, ": ", is_sequence ? "seq(" : "", dtype_name(dtype));
  if (has_shape) {
    s += "[";
    for (size_t i = 0; i < shape.size(); ++i) {
      if (i) s += ',';
      s += shape[i].to_string();
    }
    s += ']';
  }
  if (is_sequence) s += ')';
  return s;
}

class SessionImpl {
 public:
  SessionOptions options;
  std::shared_ptr<ir::Graph> graph;
  ModelStats stats;
  std::vector<TensorInfo> inputs, outputs;
  std::map<std::string, int> input_ids;  // every graph input, incl. initializer-backed ones
  std::unique_ptr<ThreadPool> pool;      // options.threads (0 = what affinity and quota allow)
  KernelStates kernel_states;            // prepared per node at load; read-only afterwards
  OptimizationMarks marks;               // what the precision mode and Winograd policy marked
  LoadReport load_report;                // the load's phases and passes
  mutable RunMemory memory;              // plans and arenas of the runs' node outputs
  // The main graph's initializers by value id (empty elsewhere): runs read them in place.
  std::vector<Value> constants;

  Status resolve_kernels();
  Status check_input(const TensorInfo& info, const Tensor& t,
                     std::map<std::string, int64_t>* symbols) const;
  // Batches run item by item (options.batch_split and runtime/batch_split.h); when not, why.
  bool split_batches = false;
  std::string split_obstacle;
  // kAuto: where a batch may run whole, best first (batch_cuts): the whole graph, or the nodes
  // from a cut on, for batches of up to their whole_up_to items; none = always item by item.
  std::vector<BatchCut> cuts;

  Result<std::vector<NamedValue>> run(const std::vector<NamedValue>& inputs,
                                      RunProfile* profile) const;
  // The checked inputs' run: the whole batch at once, or item by item.
  Result<std::vector<NamedValue>> run_checked(std::vector<Value> frame, RunProfile* profile) const;
  // Runs nodes [begin, end) over `frame`, whose slots `keyed` hold the values the run's planned
  // memory is keyed by (the graph inputs, or the batch gathered at a cut), and passes the frame
  // to `take` when they succeed, before it and the run's node memory are let go.
  Status run_span(std::vector<Value> frame, const std::vector<int>& keyed, size_t begin, size_t end,
                  RunProfile* profile, const std::function<Status(const std::vector<Value>&)>& take) const;
  // The graph outputs of a finished frame (initializer outputs from `constants`).
  std::vector<NamedValue> outputs_of(const std::vector<Value>& frame) const;
  // A non-initializer graph input: when the batch is split, its first dim is the batch.
  bool batched_input(const std::string& name) const {
    return std::any_of(inputs.begin(), inputs.end(), [&](const TensorInfo& t) { return t.name == name; });
  }
  // Item by item: the whole graph, or the nodes before `cut` (then the batch of its value runs
  // the rest at once).
  Result<std::vector<NamedValue>> run_items(const std::vector<NamedValue>& given, int64_t items,
                                            const BatchCut* cut, RunProfile* profile) const;
};

namespace {
TensorInfo info_of(const ir::Value& v) {
  TensorInfo i;
  i.name = v.name;
  i.dtype = v.type.dtype;
  i.shape = v.type.shape;
  i.has_shape = v.type.has_shape;
  i.is_sequence = v.type.kind == ir::ValueType::Kind::kSequence;
  i.is_optional = v.type.kind == ir::ValueType::Kind::kOptional;
  return i;
}
}  // namespace

Status SessionImpl::resolve_kernels() {
  std::set<std::string> missing;
  const bool reference_only = options.optimization_level == 0;
  graph->for_each_graph([&](ir::Graph& g) {
    for (auto& n : g.nodes) {
      n.kernel = find_kernel(n.op_type, n.domain, n.opset, DType::kUndefined, reference_only);
      if (!n.kernel)
        missing.insert(str_cat(n.domain.empty() ? "" : n.domain + ".", n.op_type, " (opset ",
                               n.opset, n.name.empty() ? "" : ", node '" + n.name + "'", ")"));
    }
  });
  if (missing.empty()) return Status::Ok();
  std::string list;
  for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
  return unimplemented("unsupported operator(s): ", list);
}

Status SessionImpl::check_input(const TensorInfo& info, const Tensor& t,
                                std::map<std::string, int64_t>* symbols) const {
  if (!t.defined()) return invalid_argument("input '", info.name, "' is an undefined tensor");
  if (info.dtype != DType::kUndefined && t.dtype() != info.dtype)
    return invalid_argument("input '", info.name, "' has type ", dtype_name(t.dtype()),
                            ", expected ", dtype_name(info.dtype));
  if (options.max_tensor_elements > 0 && t.numel() > options.max_tensor_elements)
    return resource_exhausted("input '", info.name, "' has ", t.numel(),
                              " elements, above the limit of ", options.max_tensor_elements);
  if (!info.has_shape) return Status::Ok();
  if (t.rank() != static_cast<int64_t>(info.shape.size()))
    return invalid_argument("input '", info.name, "' has rank ", t.rank(), " (shape ",
                            shape_to_string(t.shape()), "), expected rank ", info.shape.size(),
                            " (", info.to_string(), ")");
  for (size_t d = 0; d < info.shape.size(); ++d) {
    const Dim& dim = info.shape[d];
    const int64_t got = t.shape()[d];
    if (dim.is_fixed() && got != dim.value)
      return invalid_argument("input '", info.name, "' has shape ", shape_to_string(t.shape()),
                              ", expected ", info.to_string(), " (dim ", d, " must be ", dim.value, ")");
    if (!dim.is_fixed() && !dim.symbol.empty()) {
      auto [it, inserted] = symbols->emplace(dim.symbol, got);
      if (!inserted && it->second != got)
        return invalid_argument("input '", info.name, "' dim ", d, " ('", dim.symbol, "') is ", got,
                                " but another input bound '", dim.symbol, "' to ", it->second);
    }
  }
  return Status::Ok();
}

Result<std::vector<NamedValue>> SessionImpl::run(const std::vector<NamedValue>& given,
                                                 RunProfile* profile) const {
  if (profile) {
    profile->nodes.clear();
    profile->subgraph_nodes.clear();
    profile->items = 1;
  }
  const ir::Graph& g = *graph;
  std::vector<Value> frame(g.values.size());  // initializers are read from `constants`
  std::set<std::string> seen;
  std::map<std::string, int64_t> symbols;
  for (const auto& [name, value] : given) {
    auto it = input_ids.find(name);
    if (it == input_ids.end()) {
      std::string names;
      for (const auto& i : inputs) names += (names.empty() ? "" : ", ") + i.name;
      return not_found("unknown input '", name, "'; the model's inputs are: ", names);
    }
    if (!seen.insert(name).second) return invalid_argument("input '", name, "' is given twice");
    const ir::Value& decl = g.values[static_cast<size_t>(it->second)];
    const TensorInfo info = info_of(decl);
    if (value.is_tensor()) {
      OSPREY_RETURN_IF_ERROR(check_input(info, value.tensor, &symbols));
    } else if (value.is_sequence() && decl.type.kind == ir::ValueType::Kind::kTensor) {
      return invalid_argument("input '", name, "' must be a tensor, got a sequence");
    }
    frame[static_cast<size_t>(it->second)] = value;
  }
  for (const auto& i : inputs)
    if (!seen.count(i.name)) {
      const int id = input_ids.at(i.name);
      if (g.values[static_cast<size_t>(id)].type.kind == ir::ValueType::Kind::kOptional) continue;
      return invalid_argument("missing input '", i.name, "' (", i.to_string(), ")");
    }
  if (split_batches) {
    int64_t items = 0;  // the batch: every non-initializer input's first dim (one symbol)
    for (const auto& [name, value] : given)
      if (value.is_tensor() && batched_input(name)) items = value.tensor.dim(0);
    if (items > 1) {
      auto cut = std::find_if(cuts.begin(), cuts.end(), [&](const BatchCut& c) { return c.whole_up_to >= items; });
      if (cut == cuts.end()) return run_items(given, items, nullptr, profile);
      if (cut->node > 0) return run_items(given, items, &*cut, profile);
    }
  }
  return run_checked(std::move(frame), profile);
}

namespace {
// Item `i`'s tensor `part` of a batch of `items` into `whole`, made [items * d0, ...] at item 0.
Status place_item(const std::string& name, const Value& part, int64_t i, int64_t items,
                  int64_t max_elements, Tensor* whole) {
  if (!part.is_tensor() || part.tensor.dtype() == DType::kString)
    return internal_error("item-by-item run: '", name, "' is not a numeric tensor");
  const Tensor& p = part.tensor;
  if (i == 0) {
    Shape s = p.shape();
    if (s.empty()) return internal_error("item-by-item run: '", name, "' is a scalar");
    s[0] *= items;
    OSPREY_ASSIGN_OR_RETURN(*whole, Tensor::create_uninitialized(p.dtype(), s, max_elements));
  }
  if (p.dtype() != whole->dtype() || p.nbytes() * static_cast<size_t>(items) != whole->nbytes())
    return internal_error("item-by-item run: '", name, "' changed shape between items");
  std::memcpy(static_cast<char*>(whole->raw_data()) + static_cast<size_t>(i) * p.nbytes(), p.raw_data(), p.nbytes());
  return Status::Ok();
}
}  // namespace

namespace {
// Adds a span's subgraph node timings into a run's: the same node (path) sums its time and
// runs, a new one is appended.
void add_subgraph_timings(const std::vector<NodeTiming>& from, std::vector<NodeTiming>* into) {
  for (const NodeTiming& t : from) {
    auto it = std::find_if(into->begin(), into->end(), [&](const NodeTiming& o) { return o.name == t.name; });
    if (it == into->end()) {
      into->push_back(t);
    } else {
      it->ms += t.ms;
      it->runs += t.runs;
    }
  }
}
}  // namespace

Result<std::vector<NamedValue>> SessionImpl::run_items(const std::vector<NamedValue>& given, int64_t items,
                                                       const BatchCut* cut, RunProfile* profile) const {
  // Each batched input's item i is a view of its slice; the outputs (or the cut's value) are
  // concatenated.
  const ir::Graph& g = *graph;
  const size_t end = cut ? cut->node : g.nodes.size();
  std::vector<NamedValue> item = given;
  std::vector<NamedValue> out;
  Tensor gathered;  // the cut's value, whole
  RunProfile item_profile;
  for (int64_t i = 0; i < items; ++i) {
    for (size_t k = 0; k < given.size(); ++k) {
      const auto& [name, v] = given[k];
      if (!v.is_tensor() || !batched_input(name)) continue;
      Shape s = v.tensor.shape();
      s[0] = 1;
      const size_t bytes = v.tensor.nbytes() / static_cast<size_t>(items);
      auto* base = static_cast<char*>(const_cast<void*>(v.tensor.raw_data()));
      item[k].second = Value(Tensor::wrap(v.tensor.dtype(), s, base + static_cast<size_t>(i) * bytes, nullptr));
    }
    item_profile.nodes.clear();  // the executor appends
    item_profile.subgraph_nodes.clear();
    std::vector<Value> frame(g.values.size());
    for (const auto& [name, v] : item) frame[static_cast<size_t>(input_ids.at(name))] = v;
    OSPREY_RETURN_IF_ERROR(run_span(
        std::move(frame), g.inputs, 0, end, profile ? &item_profile : nullptr, [&](const std::vector<Value>& f) {
          if (cut)
            return place_item(g.values[static_cast<size_t>(cut->value)].name, f[static_cast<size_t>(cut->value)], i,
                              items, options.max_tensor_elements, &gathered);
          std::vector<NamedValue> part = outputs_of(f);
          if (i == 0) out.resize(part.size());
          for (size_t k = 0; k < part.size(); ++k) {
            out[k].first = part[k].first;
            Tensor whole = out[k].second.tensor;
            OSPREY_RETURN_IF_ERROR(
                place_item(part[k].first, part[k].second, i, items, options.max_tensor_elements, &whole));
            out[k].second = Value(std::move(whole));
          }
          return Status::Ok();
        }));
    if (profile) {
      if (i == 0) {
        profile->nodes = item_profile.nodes;
      } else {
        for (size_t j = 0; j < profile->nodes.size() && j < item_profile.nodes.size(); ++j)
          profile->nodes[j].ms += item_profile.nodes[j].ms;
      }
      for (auto& n : profile->nodes) n.runs = i + 1;
      add_subgraph_timings(item_profile.subgraph_nodes, &profile->subgraph_nodes);
      profile->memory = item_profile.memory;
      profile->items = items;
    }
  }
  if (!cut) return out;
  // The rest of the graph, once, on the gathered batch.
  std::vector<Value> frame(g.values.size());
  frame[static_cast<size_t>(cut->value)] = Value(std::move(gathered));
  RunProfile rest;
  OSPREY_RETURN_IF_ERROR(run_span(std::move(frame), {cut->value}, cut->node, g.nodes.size(),
                                  profile ? &rest : nullptr, [&](const std::vector<Value>& f) {
                                    out = outputs_of(f);
                                    return Status::Ok();
                                  }));
  if (profile) {
    profile->nodes.insert(profile->nodes.end(), rest.nodes.begin(), rest.nodes.end());
    add_subgraph_timings(rest.subgraph_nodes, &profile->subgraph_nodes);
    profile->memory = rest.memory;
  }
  return out;
}

std::vector<NamedValue> SessionImpl::outputs_of(const std::vector<Value>& frame) const {
  const ir::Graph& g = *graph;
  std::vector<NamedValue> out;
  out.reserve(g.outputs.size());
  for (int o : g.outputs) {
    const Value& v = frame[static_cast<size_t>(o)];
    out.emplace_back(g.values[static_cast<size_t>(o)].name, v.is_none() ? constants[static_cast<size_t>(o)] : v);
  }
  return out;
}

Result<std::vector<NamedValue>> SessionImpl::run_checked(std::vector<Value> frame, RunProfile* profile) const {
  std::vector<NamedValue> out;
  OSPREY_RETURN_IF_ERROR(run_span(std::move(frame), graph->inputs, 0, graph->nodes.size(), profile,
                                  [&](const std::vector<Value>& f) {
                                    out = outputs_of(f);
                                    return Status::Ok();
                                  }));
  return out;
}

Status SessionImpl::run_span(std::vector<Value> frame, const std::vector<int>& keyed, size_t begin, size_t end,
                             RunProfile* profile,
                             const std::function<Status(const std::vector<Value>&)>& take) const {
  const ir::Graph& g = *graph;
  // Pins this calling thread's OpenMP workers before oneDNN or parallel_for use them
  // (options.pin_threads; a no-op otherwise and once they are pinned).
  pool->pin_team();
  Executor exec({options.max_tensor_elements, options.memory_limit_bytes}, pool.get(),
                &kernel_states);
  exec.set_profile(profile);
  exec.set_constants(&constants);
  // Planned memory, keyed by the span and its inputs' types and shapes (runs with sequence or
  // optional inputs use the heap).
  std::vector<int64_t> key = {static_cast<int64_t>(begin), static_cast<int64_t>(end)};
  bool plannable = true;
  for (int id : keyed) {
    const Value& v = frame[static_cast<size_t>(id)];
    if (v.is_none()) {  // an omitted optional input
      key.push_back(-1);
      continue;
    }
    if (!v.is_tensor()) {
      plannable = false;
      break;
    }
    key.push_back(static_cast<int64_t>(v.tensor.dtype()));
    key.push_back(v.tensor.rank());
    key.insert(key.end(), v.tensor.shape().begin(), v.tensor.shape().end());
  }
  std::unique_ptr<RunAllocator> allocator = plannable ? memory.begin(std::move(key)) : nullptr;
  exec.set_allocator(allocator.get());
  Status status = exec.run_nodes(g, frame, begin, end);
  if (status.ok()) status = take(frame);
  std::vector<Value>().swap(frame);  // only what `take` kept holds node memory now
  if (allocator) {
    RunMemoryStats stats = memory.finish(std::move(allocator), status.ok());
    if (profile) profile->memory = stats;
  }
  return status;
}

Session::Session(std::unique_ptr<SessionImpl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

namespace {
// Loading after the thread pool exists: `import` builds the graph (from bytes or from a file),
// then the passes run, kernels are resolved and prepared, and the signature is recorded.
template <class ImportFn>
Result<std::unique_ptr<SessionImpl>> build_session(const SessionOptions& options,
                                                   const ImportFn& import) {
  auto impl = std::make_unique<SessionImpl>();
  impl->options = options;
  if (options.threads < 0) return invalid_argument("threads must be >= 0 (0 = automatic), got ", options.threads);
  ThreadPoolOptions pool_options;
  pool_options.pin_workers = options.pin_threads;
  impl->pool = std::make_unique<ThreadPool>(options.threads, pool_options);
  impl->options.threads = impl->pool->num_threads();
  using Clock = std::chrono::steady_clock;
  const auto ms_between = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  const auto t_import = Clock::now();
  {
    OSPREY_ASSIGN_OR_RETURN(auto model, import(options));
    impl->graph = std::move(model.graph);
    impl->stats = std::move(model.stats);
  }
  const auto t_optimize = Clock::now();
  LoadReport& report = impl->load_report;
  OSPREY_RETURN_IF_ERROR(passes::optimize(*impl->graph, options, &impl->marks, &report.passes));  // optimization_level 0: none
  const auto t_prepare = Clock::now();
  report.import_ms = ms_between(t_import, t_optimize);
  report.optimize_ms = ms_between(t_optimize, t_prepare);
  OSPREY_RETURN_IF_ERROR(impl->resolve_kernels());
  PackedConstantReleaser releaser(*impl->graph);
  OSPREY_RETURN_IF_ERROR(prepare_kernels(
      *impl->graph, options.max_tensor_elements, impl->pool.get(), &impl->kernel_states,
      [&](const ir::Node& n, KernelState* st) { releaser.node_prepared(n, st); }));
  const ir::Graph& g = *impl->graph;
  impl->constants.resize(g.values.size());
  for (const auto& [id, t] : g.initializers) impl->constants[static_cast<size_t>(id)] = Value(t);
  for (int id : g.inputs) {
    const ir::Value& v = g.values[static_cast<size_t>(id)];
    impl->input_ids[v.name] = id;
    if (!g.initializers.count(id)) impl->inputs.push_back(info_of(v));
  }
  for (int id : g.outputs) impl->outputs.push_back(info_of(g.values[static_cast<size_t>(id)]));
  const passes::ShapeFacts facts = passes::infer_shapes(g, false);
  impl->split_obstacle = batch_split_obstacle(g, facts);
  if (options.batch_split == BatchSplit::kOff) {
    if (impl->split_obstacle.empty()) impl->split_obstacle = "batch_split is off";
  } else if (impl->split_obstacle.empty() && options.batch_split == BatchSplit::kAuto) {
    if (!has_convolution(g))
      impl->split_obstacle = "no convolution: batched products reuse their weights";
  }
  impl->split_batches = impl->split_obstacle.empty();
  if (impl->split_batches && options.batch_split == BatchSplit::kAuto)
    impl->cuts = batch_cuts(g, facts, cpu::last_level_cache_bytes());
  report.prepare_ms = ms_between(t_prepare, Clock::now());
  return impl;
}
}  // namespace

Result<std::unique_ptr<Session>> Session::load_from_bytes(const std::string& bytes,
                                                          const SessionOptions& options) {
  auto impl = build_session(options, [&](const SessionOptions& o) {
    return onnx_import::import_model(bytes, o.external_data_dir, o);
  });
  if (!impl.ok()) return impl.status();
  return std::unique_ptr<Session>(new Session(std::move(*impl)));
}

Result<std::unique_ptr<Session>> Session::load(const std::string& path, const SessionOptions& options) {
  // Parsed as it is read: the file's bytes are never held next to the model.
  auto file = onnx_import::ModelFile::open(path);
  if (!file.ok()) return file.status();
  SessionOptions opts = options;
  if (opts.external_data_dir.empty())
    opts.external_data_dir = std::filesystem::path(path).parent_path().string();
  auto impl = build_session(opts, [&](const SessionOptions& o) {
    return onnx_import::import_model_file(*file, o.external_data_dir, o);
  });
  if (!impl.ok()) return impl.status().with_context(path);
  return std::unique_ptr<Session>(new Session(std::move(*impl)));
}

const std::vector<TensorInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo>& Session::outputs() const { return impl_->outputs; }
const ModelStats& Session::stats() const { return impl_->stats; }
const SessionOptions& Session::options() const { return impl_->options; }
std::string Session::graph_dump() const { return passes::dump_graph(*impl_->graph); }
std::string Session::batch_split_summary() const {
  if (!impl_->split_batches) return "whole batch (" + impl_->split_obstacle + ")";
  // Each place a batch may run whole, in the order a run picks the first that takes its size.
  std::string s;
  int64_t largest = 0;
  for (const BatchCut& c : impl_->cuts) {
    if (c.whole_up_to <= largest) continue;  // never picked: a better one takes these sizes
    const std::string up_to = (largest == 0 ? "up to " : std::to_string(largest + 1) + " to ") +
                              std::to_string(c.whole_up_to) + " items";
    if (c.node == 0) {
      s += (s.empty() ? "whole batch " : "; whole batch ") + up_to;
    } else {
      s += (s.empty() ? "" : "; ") + up_to + ": item by item until " +
           impl_->graph->nodes[c.node].display_name() + ", whole batch from there";
    }
    largest = c.whole_up_to;
  }
  if (s.empty()) return "item by item";
  return s + " (weights reused, activations within the last-level cache); item by item above";
}

const OptimizationMarks& Session::optimization_marks() const { return impl_->marks; }
const LoadReport& Session::load_report() const { return impl_->load_report; }

SessionMemoryUsage Session::memory_usage() const { return impl_->memory.usage(); }

void Session::trim() const {
  impl_->memory.trim();
  trim_memory();
}

Result<std::vector<NamedValue>> Session::run_values(const std::vector<NamedValue>& inputs) const {
  return impl_->run(inputs, nullptr);
}

Result<std::vector<NamedTensor>> Session::run(const std::vector<NamedTensor>& inputs) const {
  return run(inputs, nullptr);
}

Result<std::vector<NamedTensor>> Session::run(const std::vector<NamedTensor>& inputs,
                                              RunProfile* profile) const {
  std::vector<NamedValue> in;
  in.reserve(inputs.size());
  for (const auto& [n, t] : inputs) in.emplace_back(n, Value(t));
  OSPREY_ASSIGN_OR_RETURN(auto outs, impl_->run(in, profile));
  std::vector<NamedTensor> result;
  result.reserve(outs.size());
  for (auto& [n, v] : outs) {
    if (!v.is_tensor())
      return invalid_argument("output '", n, "' is not a tensor (", v.is_sequence() ? "a sequence" : "empty",
                              "): use run_values()");
    result.emplace_back(n, std::move(v.tensor));
  }
  return result;
}

}  // namespace osprey
