#include "kernels/cpu/dnnl_common.h"

#include "base/block_cache.h"
#include "base/large_pages.h"

#include <omp.h>

#include <atomic>
#include <cstdlib>

namespace osprey::cpu {

namespace {
// oneDNN keeps every primitive it creates in a process-wide cache (1024 by default), so a model
// run at many input shapes (random sequence lengths) grows by one set of JIT kernels per shape:
// 16 MiB over 200 lengths of a small model. The kernels keep their own capped per-node cache
// of what they reuse; oneDNN's needs to cover only the repeats inside one model (identical
// layers). Unless the user set oneDNN's own variable, cap it at 64.
constexpr int kPrimitiveCacheCapacity = 64;

dnnl::engine make_engine() {
  if (!std::getenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY") && !std::getenv("DNNL_PRIMITIVE_CACHE_CAPACITY"))
    dnnl::set_primitive_cache_capacity(kPrimitiveCacheCapacity);
  return dnnl::engine(dnnl::engine::kind::cpu, 0);
}
}  // namespace

const dnnl::engine& dnnl_engine() {
  static const dnnl::engine engine = make_engine();
  return engine;
}

int kernel_threads(const KernelContext& ctx) {
  return ctx.pool() ? std::max(1, ctx.pool()->num_threads()) : 1;
}

void use_threads(int threads) {
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

Status read_activation(const KernelContext& ctx, Activation* act) {
  struct Known {
    const char* name;
    size_t params;
  };
  static constexpr Known kKnown[] = {
      {"", 0},        {"Relu", 0},        {"Clip", 2},      {"LeakyRelu", 1},
      {"Sigmoid", 0}, {"HardSigmoid", 2}, {"HardSwish", 0}, {"Tanh", 0},
      {"Silu", 0},    {"Gelu", 0},        {"GeluTanh", 0},  {"Mish", 0},
  };
  act->name = ctx.attr_string("activation", "");
  act->params = ctx.attr_floats("activation_params");
  for (const auto& k : kKnown) {
    if (act->name != k.name) continue;
    if (act->params.size() != k.params)
      return invalid_argument("activation ", act->name.empty() ? "(none)" : act->name, " takes ",
                              k.params, " activation_params, got ", act->params.size());
    act->affine.clear();
    if (ctx.has_attr("activation_affine")) {
      act->affine = ctx.attr_floats("activation_affine");
      if (act->affine.size() != 2)
        return invalid_argument("attribute activation_affine takes 2 values [scale, shift], got ",
                                act->affine.size());
    }
    return Status::Ok();
  }
  return invalid_argument("unknown activation '", act->name, "'");
}

void append_activation(const Activation& act, dnnl::post_ops* ops) {
  using A = dnnl::algorithm;
  const std::string& n = act.name;
  const auto& p = act.params;
  if (!act.affine.empty()) {  // after the activation
    Activation plain = act;
    plain.affine.clear();
    append_activation(plain, ops);
    ops->append_eltwise(1.0f, A::eltwise_linear, act.affine[0], act.affine[1]);
    return;
  }
  if (n.empty()) return;
  if (n == "Relu")
    ops->append_eltwise(1.0f, A::eltwise_relu, 0.0f, 0.0f);
  else if (n == "LeakyRelu")
    ops->append_eltwise(1.0f, A::eltwise_relu, p[0], 0.0f);
  else if (n == "Clip")
    ops->append_eltwise(1.0f, A::eltwise_clip_v2, p[0], p[1]);
  else if (n == "Sigmoid")
    ops->append_eltwise(1.0f, A::eltwise_logistic, 0.0f, 0.0f);
  else if (n == "HardSigmoid") {  // max(0, min(1, alpha * x + beta))
    ops->append_eltwise(1.0f, A::eltwise_linear, p[0], p[1]);
    ops->append_eltwise(1.0f, A::eltwise_clip_v2, 0.0f, 1.0f);
  } else if (n == "HardSwish")
    ops->append_eltwise(1.0f, A::eltwise_hardswish, 0.0f, 0.0f);
  else if (n == "Tanh")
    ops->append_eltwise(1.0f, A::eltwise_tanh, 0.0f, 0.0f);
  else if (n == "Silu")
    ops->append_eltwise(1.0f, A::eltwise_swish, 1.0f, 0.0f);
  else if (n == "Gelu")
    ops->append_eltwise(1.0f, A::eltwise_gelu_erf, 0.0f, 0.0f);
  else if (n == "GeluTanh")
    ops->append_eltwise(1.0f, A::eltwise_gelu_tanh, 0.0f, 0.0f);
  else if (n == "Mish")
    ops->append_eltwise(1.0f, A::eltwise_mish, 0.0f, 0.0f);
}

Buffer::Buffer(size_t bytes) {
  if (bytes == 0) return;
  const size_t rounded = (bytes + 63) / 64 * 64;
  ptr_ = std::unique_ptr<void, Free>(detail::acquire_block(rounded), Free{rounded});
}

void Buffer::Free::operator()(void* p) const {
  detail::release_block(p, bytes);
}

namespace {
// One stream per calling thread, made on first use: a stream is cheap but not free, and every
// kernel call used to make one (a few microseconds on each of a CNN's ~50 convolutions).
dnnl::stream& thread_stream() {
  thread_local dnnl::stream s(dnnl_engine());
  return s;
}
}  // namespace

void ExecArgs::add(const ExecArg& a) {
  if (n_ == kMax) throw dnnl::error(dnnl_invalid_arguments, "more primitive arguments than ExecArgs holds");
  args_[n_++] = a;
}

namespace {
// The memory objects a thread binds run buffers through, per (primitive, argument id). A key
// whose primitive was destroyed and whose address was reused by another keeps working: the
// descriptor is compared on every use and the object remade when it differs. Capped: past
// max_bound objects (many shapes over a long time) the map starts again.
struct BoundKey {
  const void* prim;
  int id;
  bool operator==(const BoundKey& o) const { return prim == o.prim && id == o.id; }
};
struct BoundKeyHash {
  size_t operator()(const BoundKey& k) const {
    return std::hash<const void*>()(k.prim) * 31 + static_cast<size_t>(k.id);
  }
};
std::atomic<size_t> max_bound{4096};

using BoundMap = std::unordered_map<BoundKey, dnnl::memory, BoundKeyHash>;

BoundMap& thread_bound() {
  thread_local BoundMap bound;
  return bound;
}

// Called once per execution, before its arguments are bound: clearing the map in the middle
// of binding one execution's arguments would free the memory objects bound just before.
void make_room_for(size_t args) {
  BoundMap& bound = thread_bound();
  if (bound.size() + args > max_bound.load(std::memory_order_relaxed)) bound.clear();
}

dnnl_memory_t bind(const void* prim, int id, const dnnl::memory::desc& md, const void* data) {
  BoundMap& bound = thread_bound();
  auto it = bound.find({prim, id});
  // The bound memory's descriptor compared in place (get_desc() would copy it, ~1 KB, on every
  // execution).
  const dnnl_memory_desc_t* have = nullptr;
  if (it != bound.end()) dnnl_memory_get_memory_desc(it->second.get(), &have);
  if (!have || !dnnl_memory_desc_equal(have, &md.data)) {
    dnnl::memory m(md, dnnl_engine(), const_cast<void*>(data));
    bound[{prim, id}] = m;
    return m.get();
  }
  it->second.set_data_handle(const_cast<void*>(data));
  return it->second.get();
}

// The calling thread's scratchpad: grows to the largest size asked for and stays.
void* thread_scratchpad(size_t bytes) {
  thread_local Buffer buf;
  thread_local size_t capacity = 0;
  if (bytes > capacity) {
    buf = Buffer();  // give the smaller one back first
    buf = Buffer(bytes);
    capacity = bytes;
  }
  return buf.data();
}

void execute_bound(const dnnl::primitive& prim, const ExecArgs& args, const dnnl::memory::desc* scratch_md) {
  dnnl_exec_arg_t c_args[ExecArgs::kMax + 1];
  int n = 0;
  const void* key = prim.get();
  make_room_for(static_cast<size_t>(args.size()) + 1);
  for (int i = 0; i < args.size(); ++i) {
    const ExecArg& a = args[i];
    c_args[n++] = {a.id, a.mem ? a.mem->get() : bind(key, a.id, *a.md, a.data)};
  }
  if (scratch_md && scratch_md->get_size() > 0)
    c_args[n++] = {DNNL_ARG_SCRATCHPAD, bind(key, DNNL_ARG_SCRATCHPAD, *scratch_md,
                                             thread_scratchpad(scratch_md->get_size()))};
  dnnl::stream& s = thread_stream();
  dnnl::error::wrap_c_api(dnnl_primitive_execute(prim.get(), s.get(), n, c_args),
                          "could not execute a primitive");
  s.wait();
}
}  // namespace

void set_bound_memory_capacity(size_t objects) { max_bound.store(objects, std::memory_order_relaxed); }

void execute(const dnnl::primitive& prim, const ExecArgs& args, const dnnl::memory::desc& scratch_md) {
  execute_bound(prim, args, &scratch_md);
}

dnnl::reorder make_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  return dnnl::reorder(dnnl::reorder::primitive_desc(dnnl_engine(), from, dnnl_engine(), to));
}

void run_reorder(const dnnl::reorder& r, const dnnl::memory& from, const dnnl::memory& to) {
  dnnl::stream& s = thread_stream();
  r.execute(s, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
  s.wait();
}

void run_reorder(const dnnl::reorder& r, const dnnl::memory::desc& from_md, const void* from,
                 const dnnl::memory::desc& to_md, void* to) {
  execute_bound(r, {arg(DNNL_ARG_FROM, from_md, from), arg(DNNL_ARG_TO, to_md, to)}, nullptr);
}

dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims, dnnl::memory::data_type dt) {
  dnnl::memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return dnnl::memory::desc(dims, dt, strides);
}

Shape channels_first(const Shape& s, bool channels_last) {
  if (!channels_last) return s;
  Shape out = {s.front(), s.back()};
  out.insert(out.end(), s.begin() + 1, s.end() - 1);
  return out;
}

Shape channels_last_of(const Shape& s) {
  Shape out = {s[0]};
  out.insert(out.end(), s.begin() + 2, s.end());
  out.push_back(s[1]);
  return out;
}

dnnl::memory::format_tag channels_last_tag(size_t rank) {
  using T = dnnl::memory::format_tag;
  return rank == 3 ? T::nwc : rank == 4 ? T::nhwc : T::ndhwc;
}

dnnl::memory::desc boundary_desc(const dnnl::memory::dims& dims, bool channels_last,
                                 dnnl::memory::data_type dt) {
  if (!channels_last) return plain_desc(dims, dt);
  return dnnl::memory::desc(dims, dt, channels_last_tag(dims.size()));
}

Result<bool> read_bf16_compute(const KernelContext& ctx) {
  const std::string p = ctx.attr_string("compute_precision", "fp32");
  if (p != "fp32" && p != "bf16")
    return invalid_argument("attribute compute_precision must be \"fp32\" or \"bf16\", got \"", p, "\"");
  return p == "bf16";
}

Status require_f32(const KernelContext& ctx, int i, const char* what) {
  if (!ctx.has_input(i)) return Status::Ok();
  if (!ctx.input_value(i).is_tensor() || ctx.input(i).dtype() != DType::kFloat32)
    return invalid_argument(what, " must be a float32 tensor");
  return Status::Ok();
}

dnnl::memory large_memory(const dnnl::memory::desc& md, std::vector<std::shared_ptr<void>>* owner) {
  void* p = allocate_large(md.get_size());
  if (!p) throw std::bad_alloc();
  owner->push_back(std::shared_ptr<void>(p, [](void* q) { free_large(q); }));
  return dnnl::memory(md, dnnl_engine(), p);
}

}  // namespace osprey::cpu
