// ONNX -> canonical converters for the compute-heavy operators: Conv, ConvTranspose, MaxPool,
// AveragePool, GlobalAveragePool, Gemm, MatMul, BatchNormalization, LayerNormalization, Softmax.
// The work is filling in defaults (strides, dilations, pads of the right length; Gemm's alpha,
// beta, transA, transB) and turning auto_pad / output_shape into explicit pads.
#include <algorithm>

#include "frontend/onnx_node.h"
#include "frontend/tensor_proto.h"

namespace tlm {
namespace frontend {
namespace {

// Kernel sizes, strides, dilations and pads beyond this are malformed, not big models.
constexpr int64_t kMaxSpatial = int64_t(1) << 31;

std::vector<int64_t> filled(size_t n, int64_t v) { return std::vector<int64_t>(n, v); }

// Checks rank >= 3 (N, C, spatial...) and returns the spatial extents.
Shape spatial_dims(NodeContext& c, ValueId x) {
  const Shape& xs = c.shape(x);
  TLM_USER_CHECK(xs.size() >= 3) << c.where() << "input '" << c.proto.input(0) << "' has shape "
                                 << shape_str(xs)
                                 << "; expected N, C and at least one spatial dimension";
  return Shape(xs.begin() + 2, xs.end());
}

// The kernel extents of a Conv/ConvTranspose weight (rank must match X), checked against an
// explicit kernel_shape attribute.
std::vector<int64_t> weight_kernel(NodeContext& c, ValueId x, ValueId w) {
  const Shape& ws = c.shape(w);
  TLM_USER_CHECK(ws.size() == c.shape(x).size())
      << c.where() << "weight '" << c.proto.input(1) << "' has shape " << shape_str(ws)
      << "; expected rank " << c.shape(x).size() << " like the input";
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  for (int64_t k : kernel)
    TLM_USER_CHECK(k >= 1 && k <= kMaxSpatial)
        << c.where() << "weight '" << c.proto.input(1) << "' has shape " << shape_str(ws);
  if (c.has_attr("kernel_shape"))
    TLM_USER_CHECK(c.attr_ints("kernel_shape", {}) == kernel)
        << c.where() << "attribute 'kernel_shape' disagrees with the weight shape "
        << shape_str(ws);
  return kernel;
}

std::vector<int64_t> list_attr(NodeContext& c, const char* attr, size_t n, int64_t def,
                               int64_t lo) {
  std::vector<int64_t> v = c.attr_ints(attr, filled(n, def));
  c.check_list(attr, v, n, lo, kMaxSpatial);
  return v;
}

std::string auto_pad_mode(NodeContext& c) {
  std::string mode = c.attr_string("auto_pad", "NOTSET");
  if (mode != "NOTSET" && mode != "VALID" && mode != "SAME_UPPER" && mode != "SAME_LOWER")
    c.unsupported_attr("auto_pad", "'" + mode + "'");
  return mode;
}

// Explicit pads (begin..., end...) of Conv and pooling. SAME_* pads so that
// out = ceil(in / stride); the odd pixel goes to the end (UPPER) or the beginning (LOWER).
std::vector<int64_t> conv_pads(NodeContext& c, const Shape& in, const std::vector<int64_t>& kernel,
                               const std::vector<int64_t>& strides,
                               const std::vector<int64_t>& dilations) {
  const size_t sp = in.size();
  const std::string mode = auto_pad_mode(c);
  if (mode == "NOTSET") return list_attr(c, "pads", 2 * sp, 0, 0);
  std::vector<int64_t> pads(2 * sp, 0);
  if (mode == "VALID") return pads;
  for (size_t d = 0; d < sp; d++) {
    int64_t out = (in[d] + strides[d] - 1) / strides[d];
    int64_t span = c.add_i(c.mul(kernel[d] - 1, dilations[d]), 1);
    int64_t total = std::max<int64_t>(0, c.add_i(c.mul(out - 1, strides[d]), span) - in[d]);
    pads[d] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
    pads[d + sp] = total - pads[d];
  }
  return pads;
}

void convert_conv(NodeContext& c) {
  ValueId x = c.input(0), w = c.input(1), b = c.opt_input(2);
  Shape in = spatial_dims(c, x);
  std::vector<int64_t> kernel = weight_kernel(c, x, w);
  std::vector<int64_t> strides = list_attr(c, "strides", in.size(), 1, 1);
  std::vector<int64_t> dilations = list_attr(c, "dilations", in.size(), 1, 1);
  std::vector<int64_t> pads = conv_pads(c, in, kernel, strides, dilations);
  int64_t group = c.attr_int("group", 1);
  TLM_USER_CHECK(group >= 1 && group <= kMaxSpatial)
      << c.where() << "attribute 'group' = " << group << " must be positive";
  c.set_output(
      0, c.add(Op::Conv, {x, w, b},
               {{"strides", strides}, {"dilations", dilations}, {"pads", pads}, {"group", group}}));
}

// ConvTranspose: an explicit output_shape (or auto_pad SAME_*, which asks for in * stride)
// becomes pads via total = stride*(in-1) + output_padding + (k-1)*dilation + 1 - out. A negative
// total means the requested output is larger than the full result: the excess becomes
// output_padding (zeros at the end), which is what the ONNX test data expects.
void convert_conv_transpose(NodeContext& c) {
  ValueId x = c.input(0), w = c.input(1), b = c.opt_input(2);
  Shape in = spatial_dims(c, x);
  const size_t sp = in.size();
  std::vector<int64_t> kernel = weight_kernel(c, x, w);
  std::vector<int64_t> strides = list_attr(c, "strides", sp, 1, 1);
  std::vector<int64_t> dilations = list_attr(c, "dilations", sp, 1, 1);
  std::vector<int64_t> out_pad = list_attr(c, "output_padding", sp, 0, 0);
  int64_t group = c.attr_int("group", 1);
  TLM_USER_CHECK(group >= 1 && group <= kMaxSpatial)
      << c.where() << "attribute 'group' = " << group << " must be positive";
  const std::string mode = auto_pad_mode(c);
  std::vector<int64_t> pads(2 * sp, 0);
  if (c.has_attr("output_shape") || mode == "SAME_UPPER" || mode == "SAME_LOWER") {
    std::vector<int64_t> out(sp);
    if (c.has_attr("output_shape")) {
      std::vector<int64_t> os = c.attr_ints("output_shape", {});
      if (os.size() == sp + 2) os.erase(os.begin(), os.begin() + 2);  // N and C given too
      c.check_list("output_shape", os, sp, 1, kMaxTensorElements);
      out = os;
    } else {
      for (size_t d = 0; d < sp; d++) out[d] = c.mul(in[d], strides[d]);
    }
    for (size_t d = 0; d < sp; d++) {
      int64_t span = c.add_i(c.mul(kernel[d] - 1, dilations[d]), 1);
      int64_t full = c.add_i(c.add_i(c.mul(strides[d], in[d] - 1), out_pad[d]), span);
      int64_t total = full - out[d];
      if (total < 0) {
        out_pad[d] = c.add_i(out_pad[d], -total);
        total = 0;
      }
      pads[d] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[d + sp] = total - pads[d];
    }
  } else if (mode == "NOTSET") {
    pads = list_attr(c, "pads", 2 * sp, 0, 0);
  }
  c.set_output(0, c.add(Op::ConvTranspose, {x, w, b},
                        {{"strides", strides},
                         {"dilations", dilations},
                         {"pads", pads},
                         {"output_padding", out_pad},
                         {"group", group}}));
}

void convert_pool(NodeContext& c, Op op) {
  ValueId x = c.input(0);
  Shape in = spatial_dims(c, x);
  const size_t sp = in.size();
  TLM_USER_CHECK(c.has_attr("kernel_shape"))
      << c.where() << "required attribute 'kernel_shape' is missing";
  std::vector<int64_t> kernel = list_attr(c, "kernel_shape", sp, 1, 1);
  std::vector<int64_t> strides = list_attr(c, "strides", sp, 1, 1);
  std::vector<int64_t> dilations = list_attr(c, "dilations", sp, 1, 1);
  int64_t ceil_mode = c.attr_flag("ceil_mode", 0);
  std::vector<int64_t> pads = conv_pads(c, in, kernel, strides, dilations);
  Attrs attrs = {
      {"kernel_shape", kernel}, {"strides", strides}, {"pads", pads}, {"ceil_mode", ceil_mode}};
  if (op == Op::MaxPool) {
    int64_t storage_order = c.attr_int("storage_order", 0);
    if (storage_order != 0) c.unsupported_attr("storage_order", std::to_string(storage_order));
    attrs["dilations"] = dilations;
    c.forbid_output(1, "MaxPool's Indices output is not supported");
  } else {
    if (dilations != filled(sp, 1)) c.unsupported_attr("dilations", "(not all 1)");
    attrs["count_include_pad"] = c.attr_flag("count_include_pad", 0);
  }
  c.set_output(0, c.add(op, {x}, attrs));
}

void convert_maxpool(NodeContext& c) { convert_pool(c, Op::MaxPool); }
void convert_averagepool(NodeContext& c) { convert_pool(c, Op::AveragePool); }

void convert_global_averagepool(NodeContext& c) {
  ValueId x = c.input(0);
  spatial_dims(c, x);
  c.set_output(0, c.add(Op::GlobalAveragePool, {x}));
}

void convert_gemm(NodeContext& c) {
  ValueId a = c.input(0), b = c.input(1), bias = c.opt_input(2);
  c.set_output(0, c.add(Op::Gemm, {a, b, bias},
                        {{"alpha", c.attr_float("alpha", 1.f)},
                         {"beta", c.attr_float("beta", 1.f)},
                         {"transA", c.attr_flag("transA", 0)},
                         {"transB", c.attr_flag("transB", 0)}}));
}

void convert_matmul(NodeContext& c) {
  c.set_output(0, c.add(Op::MatMul, {c.input(0), c.input(1)}));
}

void convert_batchnorm(NodeContext& c) {
  std::vector<ValueId> ins;
  for (int i = 0; i < 5; i++) ins.push_back(c.input(i));
  if (c.attr_int("training_mode", 0) != 0)
    c.unsupported_attr("training_mode", std::to_string(c.attr_int("training_mode", 0)));
  c.set_output(0,
               c.add(Op::BatchNormalization, ins, {{"epsilon", c.attr_float("epsilon", 1e-5f)}}));
  for (int i = 1; i < c.num_outputs(); i++)
    c.forbid_output(i, "BatchNormalization's running-statistics outputs exist only in training");
}

// LayerNormalization (opset 17). Its optional Mean and InvStdDev outputs are rebuilt from
// canonical ops when the model names them: mean and 1/sqrt(var + epsilon) over axes axis..r-1.
void convert_layernorm(NodeContext& c) {
  ValueId x = c.input(0), scale = c.input(1), bias = c.opt_input(2);
  const int64_t r = c.rank(x);
  const int64_t axis = c.axis(c.attr_int("axis", -1), r, "attribute 'axis'");
  const float eps = c.attr_float("epsilon", 1e-5f);
  int64_t stash = c.attr_int("stash_type", 1);
  if (stash != onnx::TensorProto::FLOAT) c.unsupported_attr("stash_type", std::to_string(stash));
  c.set_output(0,
               c.add(Op::LayerNormalization, {x, scale, bias}, {{"axis", axis}, {"epsilon", eps}}));
  if (!c.has_output(1) && !c.has_output(2)) return;
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < r; a++) axes.push_back(a);
  Attrs reduce = {{"axes", axes}, {"keepdims", int64_t(1)}};
  ValueId mean = c.add(Op::ReduceMean, {x}, reduce, "mean");
  ValueId diff = c.add(Op::Sub, {x, mean}, {}, "diff");
  ValueId sq = c.add(Op::Mul, {diff, diff}, {}, "square");
  ValueId var = c.add(Op::ReduceMean, {sq}, reduce, "variance");
  ValueId e = c.add_constant(Tensor::scalar<float>(eps), "epsilon");
  ValueId sd = c.add(Op::Sqrt, {c.add(Op::Add, {var, e}, {}, "var_eps")}, {}, "stddev");
  c.set_output(1, mean);
  c.set_output(2, c.add(Op::Reciprocal, {sd}, {}, "inv_stddev"));
}

// Softmax. Before opset 13 it coerces the input to 2-D [prod(dims < axis), prod(dims >= axis)]
// and normalises each row; canonical Softmax works along one axis, so that becomes
// Reshape -> Softmax(axis 1) -> Reshape unless the axis is already the last one.
void convert_softmax(NodeContext& c) {
  ValueId x = c.input(0);
  const Shape xs = c.shape(x);
  const int64_t r = (int64_t)xs.size();
  TLM_USER_CHECK(r >= 1) << c.where() << "input '" << c.proto.input(0) << "' is a scalar";
  if (c.opset >= 13) {
    int64_t axis = c.axis(c.attr_int("axis", -1), r, "attribute 'axis'");
    c.set_output(0, c.add(Op::Softmax, {x}, {{"axis", axis}}));
    return;
  }
  int64_t axis = c.axis(c.attr_int("axis", 1), r, "attribute 'axis'");
  if (axis == r - 1) {
    c.set_output(0, c.add(Op::Softmax, {x}, {{"axis", axis}}));
    return;
  }
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < axis; d++) rows = c.mul(rows, xs[d]);
  for (int64_t d = axis; d < r; d++) cols = c.mul(cols, xs[d]);
  ValueId flat = c.add(Op::Reshape, {x}, {{"shape", std::vector<int64_t>{rows, cols}}}, "to_2d");
  ValueId sm = c.add(Op::Softmax, {flat}, {{"axis", int64_t(1)}}, "softmax_2d");
  c.set_output(0, c.add(Op::Reshape, {sm}, {{"shape", std::vector<int64_t>(xs)}}));
}

}  // namespace

const std::vector<OnnxOpRow>& nn_op_rows() {
  // op_type, converter, min inputs, max inputs, max outputs, constant-input mask
  static const std::vector<OnnxOpRow> rows = {
      {"Conv", convert_conv, 2, 3, 1, 0},
      {"ConvTranspose", convert_conv_transpose, 2, 3, 1, 0},
      {"MaxPool", convert_maxpool, 1, 1, 2, 0},
      {"AveragePool", convert_averagepool, 1, 1, 1, 0},
      {"GlobalAveragePool", convert_global_averagepool, 1, 1, 1, 0},
      {"Gemm", convert_gemm, 2, 3, 1, 0},
      {"MatMul", convert_matmul, 2, 2, 1, 0},
      {"BatchNormalization", convert_batchnorm, 5, 5, 5, 0},
      {"LayerNormalization", convert_layernorm, 2, 3, 3, 0},
      {"Softmax", convert_softmax, 1, 1, 1, 0},
  };
  return rows;
}

}  // namespace frontend
}  // namespace tlm
