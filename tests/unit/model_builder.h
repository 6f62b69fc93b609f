// Builds small ONNX models in memory for tests.
#pragma once

#include <string>
#include <vector>

#include "osprey_onnx/onnx.pb.h"

namespace osprey::testing {

class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 17) {
    model_.set_ir_version(8);
    model_.set_producer_name("osprey-tests");
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("g");
  }
  // dims: >= 0 fixed, -1 symbolic named by `sym`.
  ModelBuilder& input(const std::string& name, int elem, std::vector<int64_t> dims,
                      const std::string& sym = "N") {
    set_type(model_.mutable_graph()->add_input(), name, elem, dims, sym);
    return *this;
  }
  ModelBuilder& output(const std::string& name, int elem = onnx::TensorProto::FLOAT) {
    auto* v = model_.mutable_graph()->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs,
                        const std::string& name = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + outs[0] : name);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return *n;
  }
  onnx::TensorProto& initializer(const std::string& name, std::vector<int64_t> dims, std::vector<float> values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
    for (auto v : values) t->add_float_data(v);
    return *t;
  }
  onnx::TensorProto& initializer_i64(const std::string& name, std::vector<int64_t> dims,
                                     std::vector<int64_t> values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (auto d : dims) t->add_dims(d);
    for (auto v : values) t->add_int64_data(v);
    return *t;
  }
  // A graph attribute `name` of node `n` (a Loop's body, an If's branch), itself named `name`,
  // with inputs `inputs` (untyped, as a Loop body's may be).
  static onnx::GraphProto* subgraph(onnx::NodeProto& n, const std::string& name,
                                    const std::vector<std::string>& inputs) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    g->set_name(name);
    for (const auto& i : inputs) g->add_input()->set_name(i);
    return g;
  }
  // Appends node `op` of `g`, named after its one output.
  static void subgraph_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& ins,
                            const std::string& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(out);
    for (const auto& i : ins) n->add_input(i);
    n->add_output(out);
  }
  std::string bytes() const { return model_.SerializeAsString(); }
  onnx::ModelProto& proto() { return model_; }

 private:
  static void set_type(onnx::ValueInfoProto* v, const std::string& name, int elem,
                       const std::vector<int64_t>& dims, const std::string& sym) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (auto d : dims) {
      auto* dim = shape->add_dim();
      if (d >= 0) dim->set_dim_value(d);
      else dim->set_dim_param(sym);
    }
  }
  onnx::ModelProto model_;
};

}  // namespace osprey::testing
