// Test helper: builds small ONNX ModelProtos in C++ (the tests never depend on Python), e.g.
//
//   OnnxBuilder b(13);
//   b.input("x", onnx::TensorProto::FLOAT, {1, 3, 8, 8});
//   b.init_f32("w", {4, 3, 3, 3}, std::vector<float>(108, 0.5f));
//   auto& conv = b.node("Conv", {"x", "w"}, {"y"}, "conv");
//   set_attr(conv, "auto_pad", "SAME_UPPER");
//   b.output("y");
//   Graph g = b.import();
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <variant>
#include <vector>

#include "frontend/onnx_import.h"

namespace tlm {
namespace testing_onnx {

using Dim = std::variant<int64_t, std::string>;  // a value or a dim_param name

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int opset = 13) {
    model.set_ir_version(8);
    auto* o = model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model.mutable_graph()->set_name("test_graph");
  }

  onnx::GraphProto& graph() { return *model.mutable_graph(); }

  void input(const std::string& name, int elem_type, const std::vector<Dim>& dims) {
    value_info(graph().add_input(), name, elem_type, dims);
  }
  void output(const std::string& name) { graph().add_output()->set_name(name); }

  onnx::TensorProto& init_f32(const std::string& name, const std::vector<int64_t>& dims,
                              const std::vector<float>& v) {
    onnx::TensorProto& t = *graph().add_initializer();
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t.add_dims(d);
    for (float x : v) t.add_float_data(x);
    return t;
  }
  onnx::TensorProto& init_i64(const std::string& name, const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& v) {
    onnx::TensorProto& t = *graph().add_initializer();
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t.add_dims(d);
    for (int64_t x : v) t.add_int64_data(x);
    return t;
  }

  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& ins,
                        const std::vector<std::string>& outs, const std::string& name = "") {
    onnx::NodeProto& n = *graph().add_node();
    n.set_op_type(op);
    n.set_name(name);
    for (const auto& i : ins) n.add_input(i);
    for (const auto& o : outs) n.add_output(o);
    return n;
  }

  std::string bytes() const {
    std::string s;
    model.SerializeToString(&s);
    return s;
  }
  Graph import(const ImportOptions& opts = {}) const {
    return import_onnx_bytes(bytes(), "test.onnx", opts);
  }

  onnx::ModelProto model;

 private:
  static void value_info(onnx::ValueInfoProto* vi, const std::string& name, int elem_type,
                         const std::vector<Dim>& dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    auto* shape = tt->mutable_shape();
    for (const Dim& d : dims) {
      auto* dim = shape->add_dim();
      if (std::holds_alternative<int64_t>(d))
        dim->set_dim_value(std::get<int64_t>(d));
      else if (!std::get<std::string>(d).empty())
        dim->set_dim_param(std::get<std::string>(d));
    }
  }
};

inline onnx::AttributeProto& new_attr(onnx::NodeProto& n, const std::string& name,
                                      onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(type);
  return a;
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  new_attr(n, name, onnx::AttributeProto::INT).set_i(v);
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, float v) {
  new_attr(n, name, onnx::AttributeProto::FLOAT).set_f(v);
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, const char* v) {
  new_attr(n, name, onnx::AttributeProto::STRING).set_s(v);
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto& a = new_attr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
}
inline onnx::TensorProto& set_tensor_attr(onnx::NodeProto& n, const std::string& name) {
  return *new_attr(n, name, onnx::AttributeProto::TENSOR).mutable_t();
}

}  // namespace testing_onnx
}  // namespace tlm
