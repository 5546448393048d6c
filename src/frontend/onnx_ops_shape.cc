// ONNX -> canonical converters for data movement and constants: Reshape, Flatten, Transpose,
// Squeeze, Unsqueeze, Concat, Slice, Split, Gather, Expand, Shape, Constant, ConstantOfShape,
// Identity, Dropout, Pad. Constant inputs that ONNX passes at runtime (shapes, axes, slice bounds,
// split sizes, pads) become attributes resolved against the static input shape: Reshape's 0 and
// -1, Slice's clamped per-dimension bounds, Expand's full broadcast shape. Split becomes one
// Slice per output; Pad a Concat of borders per padded axis; Shape, Constant and ConstantOfShape
// become constants; Identity and Dropout alias.
#include <algorithm>
#include <cstring>
#include <limits>

#include "frontend/onnx_node.h"
#include "frontend/tensor_proto.h"

namespace tlm {
namespace frontend {
namespace {

void convert_reshape(NodeContext& c) {
  ValueId x = c.input(0);
  const Shape xs = c.shape(x);
  const std::vector<int64_t> spec = c.const_ints(1, "Reshape shape");
  const bool allowzero = c.attr_flag("allowzero", 0);
  const int64_t in_numel = checked_numel(xs, c.where() + "input '" + c.proto.input(0) + "'");
  Shape out(spec.size());
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); i++) {
    int64_t v = spec[i];
    if (v == -1) {
      TLM_USER_CHECK(inferred < 0) << c.where() << "Reshape shape has more than one -1";
      inferred = (int)i;
      continue;
    }
    if (v == 0 && !allowzero) {
      TLM_USER_CHECK(i < xs.size()) << c.where() << "Reshape shape entry " << i
                                    << " is 0 (copy the input extent) but the input "
                                    << shape_str(xs) << " has no dimension " << i;
      v = xs[i];
    }
    TLM_USER_CHECK(v > 0) << c.where() << "Reshape shape entry " << i << " = " << v
                          << (v == 0 ? " makes a zero-size tensor, which tlm does not support"
                                     : " is invalid");
    out[i] = v;
    known = c.mul(known, v);
  }
  if (inferred >= 0) {
    TLM_USER_CHECK(in_numel % known == 0 && in_numel / known > 0)
        << c.where() << "cannot reshape " << shape_str(xs)
        << " with a -1 in the shape: " << in_numel << " elements are not a multiple of " << known;
    out[inferred] = in_numel / known;
    known = in_numel;
  }
  TLM_USER_CHECK(known == in_numel) << c.where() << "cannot reshape " << shape_str(xs) << " ("
                                    << in_numel << " elements) to " << shape_str(out);
  c.set_output(0, c.add(Op::Reshape, {x}, {{"shape", std::vector<int64_t>(out)}}));
}

void convert_flatten(NodeContext& c) {
  ValueId x = c.input(0);
  const int64_t r = c.rank(x);
  int64_t axis = c.attr_int("axis", 1);
  TLM_USER_CHECK(axis >= -r && axis <= r)
      << c.where() << "attribute 'axis' = " << axis << " is out of range for rank " << r;
  if (axis < 0) axis += r;
  c.set_output(0, c.add(Op::Flatten, {x}, {{"axis", axis}}));
}

void convert_transpose(NodeContext& c) {
  ValueId x = c.input(0);
  const int64_t r = c.rank(x);
  std::vector<int64_t> rev;
  for (int64_t d = r - 1; d >= 0; d--) rev.push_back(d);
  std::vector<int64_t> perm = c.attr_ints("perm", rev);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool ok = (int64_t)perm.size() == r;
  for (int64_t d = 0; ok && d < r; d++) ok = sorted[d] == d;
  TLM_USER_CHECK(ok) << c.where() << "attribute 'perm' is not a permutation of the " << r
                     << " input axes";
  c.set_output(0, c.add(Op::Transpose, {x}, {{"perm", perm}}));
}

// Axes of Squeeze/Unsqueeze/ReduceSum-style ops: an attribute before opset 13, an input after.
// Returns false when the model gives none.
bool axes_operand(NodeContext& c, const char* what, std::vector<int64_t>* axes) {
  if (c.opset < 13) {
    TLM_USER_CHECK(!c.has_input(1))
        << c.where() << "before opset 13 the axes are an attribute, not an input";
    *axes = c.attr_ints("axes", {});
    return c.has_attr("axes");
  }
  if (!c.has_input(1)) return false;
  *axes = c.const_ints(1, what);
  return true;
}

void convert_squeeze(NodeContext& c) {
  ValueId x = c.input(0);
  const Shape xs = c.shape(x);
  std::vector<int64_t> axes;
  // An empty axes list means "not given", as in onnxruntime: squeeze every extent-1 axis.
  if (axes_operand(c, "Squeeze axes", &axes) && !axes.empty()) {
    axes = c.axes(axes, (int64_t)xs.size(), "Squeeze axes");
    for (int64_t a : axes)
      TLM_USER_CHECK(xs[a] == 1) << c.where() << "cannot squeeze axis " << a << " of "
                                 << shape_str(xs) << ": its extent is not 1";
  } else {
    for (size_t d = 0; d < xs.size(); d++)
      if (xs[d] == 1) axes.push_back((int64_t)d);
  }
  if (axes.empty()) {
    c.set_output(0, x);
    return;
  }
  c.set_output(0, c.add(Op::Squeeze, {x}, {{"axes", axes}}));
}

void convert_unsqueeze(NodeContext& c) {
  ValueId x = c.input(0);
  std::vector<int64_t> axes;
  TLM_USER_CHECK(axes_operand(c, "Unsqueeze axes", &axes)) << c.where() << "the axes are missing";
  TLM_USER_CHECK(axes.size() <= 32) << c.where() << "too many axes";
  axes = c.axes(axes, c.rank(x) + (int64_t)axes.size(), "Unsqueeze axes");
  if (axes.empty()) {
    c.set_output(0, x);
    return;
  }
  c.set_output(0, c.add(Op::Unsqueeze, {x}, {{"axes", axes}}));
}

void convert_concat(NodeContext& c) {
  std::vector<ValueId> ins;
  for (int i = 0; i < c.proto.input_size(); i++) ins.push_back(c.input(i));
  int64_t axis = c.axis(c.attr_int_required("axis"), c.rank(ins[0]), "attribute 'axis'");
  c.set_output(0, c.add(Op::Concat, ins, {{"axis", axis}}));
}

void convert_slice(NodeContext& c) {
  ValueId x = c.input(0);
  const Shape xs = c.shape(x);
  const int64_t r = (int64_t)xs.size();
  std::vector<int64_t> starts = c.const_ints(1, "Slice starts");
  std::vector<int64_t> ends = c.const_ints(2, "Slice ends");
  std::vector<int64_t> axes, steps(starts.size(), 1);
  if (c.has_input(3)) {
    axes = c.const_ints(3, "Slice axes");
  } else {
    for (size_t i = 0; i < starts.size(); i++) axes.push_back((int64_t)i);
  }
  if (c.has_input(4)) steps = c.const_ints(4, "Slice steps");
  TLM_USER_CHECK(ends.size() == starts.size() && axes.size() == starts.size() &&
                 steps.size() == starts.size())
      << c.where() << "Slice starts, ends, axes and steps differ in length";
  std::vector<int64_t> all_starts(r, 0), all_ends(xs.begin(), xs.end()), all_steps(r, 1);
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < starts.size(); i++) {
    const int64_t a = c.axis(axes[i], r, "Slice axes");
    TLM_USER_CHECK(!seen[a]) << c.where() << "Slice axes repeat axis " << a;
    seen[a] = true;
    const int64_t dim = xs[a];
    int64_t s = starts[i], e = ends[i], step = steps[i];
    TLM_USER_CHECK(step != 0) << c.where() << "Slice step for axis " << a << " is 0";
    // Clamping as ONNX specifies; a step longer than the extent reads one element either way,
    // so it is shortened to keep index arithmetic downstream far from overflow.
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      step = std::min(step, std::max<int64_t>(dim, 1));
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      step = std::max(step, -std::max<int64_t>(dim, 1));
      // "Through index 0" is written -dim-1, not -1: the canonical values keep ONNX's meaning
      // (a negative end counts from the back), so -1 would read as the last element.
      if (e == -1) e = -dim - 1;
    }
    all_starts[a] = s;
    all_ends[a] = e;
    all_steps[a] = step;
  }
  c.set_output(
      0, c.add(Op::Slice, {x}, {{"starts", all_starts}, {"ends", all_ends}, {"steps", all_steps}}));
}

void convert_split(NodeContext& c) {
  ValueId x = c.input(0);
  const Shape xs = c.shape(x);
  const int64_t r = (int64_t)xs.size();
  const int64_t axis = c.axis(c.attr_int("axis", 0), r, "attribute 'axis'");
  const int64_t dim = xs[axis];
  const int n = c.num_outputs();
  TLM_USER_CHECK(n >= 1) << c.where() << "Split has no outputs";
  std::vector<int64_t> sizes;
  bool given;
  if (c.opset < 13) {
    TLM_USER_CHECK(!c.has_input(1))
        << c.where() << "before opset 13 the split sizes are an attribute, not an input";
    given = c.has_attr("split");
    sizes = c.attr_ints("split", {});
  } else {
    given = c.has_input(1);
    if (given) sizes = c.const_ints(1, "Split sizes", 4096);
  }
  if (!given) {
    TLM_USER_CHECK(dim % n == 0) << c.where() << "cannot split extent " << dim << " of axis "
                                 << axis << " into " << n << " equal parts";
    sizes.assign(n, dim / n);
  }
  TLM_USER_CHECK((int64_t)sizes.size() == n)
      << c.where() << "Split has " << n << " outputs but " << sizes.size() << " sizes";
  int64_t total = 0;
  for (int64_t s : sizes) {
    TLM_USER_CHECK(s > 0 && s <= dim)
        << c.where() << "Split size " << s << " is invalid for extent " << dim
        << (s == 0 ? " (zero-size outputs are not supported)" : "");
    total += s;
  }
  TLM_USER_CHECK(total == dim) << c.where() << "Split sizes add up to " << total
                               << ", not to the extent " << dim << " of axis " << axis;
  int64_t offset = 0;
  for (int i = 0; i < n; i++) {
    std::vector<int64_t> starts(r, 0), ends(xs.begin(), xs.end()), steps(r, 1);
    starts[axis] = offset;
    ends[axis] = offset + sizes[i];
    offset += sizes[i];
    if (!c.has_output(i)) continue;
    c.set_output(i, c.add(Op::Slice, {x}, {{"starts", starts}, {"ends", ends}, {"steps", steps}},
                          std::to_string(i)));
  }
}

void convert_gather(NodeContext& c) {
  ValueId data = c.input(0), indices = c.input(1);
  const Shape ds = c.shape(data);
  const int64_t axis = c.axis(c.attr_int("axis", 0), (int64_t)ds.size(), "attribute 'axis'");
  const Value& iv = c.value(indices);
  TLM_USER_CHECK(iv.dtype == DType::I64) << c.where() << "indices '" << c.proto.input(1)
                                         << "' must be integers, not " << dtype_name(iv.dtype);
  if (iv.is_constant()) {
    // Constant indices are checked here so that folding never reads out of bounds.
    const Tensor& t = *iv.data;
    for (int64_t i = 0; i < t.numel(); i++) {
      int64_t k = t.get_i(i);
      TLM_USER_CHECK(k >= -ds[axis] && k < ds[axis])
          << c.where() << "index " << k << " is out of range for extent " << ds[axis] << " of axis "
          << axis;
    }
  }
  c.set_output(0, c.add(Op::Gather, {data, indices}, {{"axis", axis}}));
}

void convert_expand(NodeContext& c) {
  ValueId x = c.input(0);
  const Shape xs = c.shape(x);
  const std::vector<int64_t> spec = c.const_ints(1, "Expand shape");
  const size_t r = std::max(xs.size(), spec.size());
  Shape out(r);
  for (size_t i = 0; i < r; i++) {
    // Right-aligned numpy broadcasting of the input shape with the requested one.
    int64_t a = i + xs.size() >= r ? xs[i + xs.size() - r] : 1;
    int64_t b = i + spec.size() >= r ? spec[i + spec.size() - r] : 1;
    TLM_USER_CHECK(b >= 0) << c.where() << "Expand shape has a negative entry " << b;
    TLM_USER_CHECK(a == b || a == 1 || b == 1)
        << c.where() << "cannot broadcast " << shape_str(xs) << " to " << shape_str(spec);
    out[i] = a == 1 ? b : a;
    TLM_USER_CHECK(out[i] > 0) << c.where() << "Expand to " << shape_str(spec)
                               << " makes a zero-size tensor, which tlm does not support";
  }
  checked_numel(out, c.where() + "Expand output");
  c.set_output(0, c.add(Op::Expand, {x}, {{"shape", std::vector<int64_t>(out)}}));
}

void convert_shape(NodeContext& c) {
  const Shape xs = c.shape(c.input(0));
  const int64_t r = (int64_t)xs.size();
  auto clamp_index = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
  int64_t start = clamp_index(c.attr_int("start", 0)), end = clamp_index(c.attr_int("end", r));
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; d++) dims.push_back(xs[d]);
  const int64_t len = (int64_t)dims.size();
  c.set_output(0, c.add_constant(Tensor::from<int64_t>({len}, dims), "shape"));
}

void convert_constant(NodeContext& c) {
  static const char* const kForms[] = {"value",         "value_float", "value_floats",
                                       "value_int",     "value_ints",  "value_string",
                                       "value_strings", "sparse_value"};
  int count = 0;
  for (const char* f : kForms) count += c.has_attr(f);
  TLM_USER_CHECK(count == 1) << c.where() << "needs exactly one value attribute, has " << count;
  Tensor t;
  if (const onnx::TensorProto* p = c.attr_tensor("value")) {
    t = tensor_from_proto(*p, c.where() + "attribute 'value'");
  } else if (c.has_attr("value_float")) {
    t = Tensor::scalar<float>(c.attr_float("value_float", 0.f));
  } else if (c.has_attr("value_floats")) {
    std::vector<float> v = c.attr_floats("value_floats", {});
    t = Tensor::from<float>({(int64_t)v.size()}, v);
  } else if (c.has_attr("value_int")) {
    t = Tensor::scalar<int64_t>(c.attr_int("value_int", 0));
  } else if (c.has_attr("value_ints")) {
    std::vector<int64_t> v = c.attr_ints("value_ints", {});
    t = Tensor::from<int64_t>({(int64_t)v.size()}, v);
  } else {
    for (const char* f : {"value_string", "value_strings", "sparse_value"})
      if (c.has_attr(f)) c.unsupported_attr(f, "(string and sparse constants)");
  }
  c.set_output(0, c.add_constant(std::move(t), "value"));
}

// A constant of `shape` holding the one element of `fill` everywhere (ConstantOfShape, Pad's
// borders); `what` names it in the size errors.
Tensor filled(NodeContext& c, const Tensor& fill, const Shape& shape, const char* what) {
  const int64_t n = checked_numel(shape, c.where() + what);
  TLM_USER_CHECK(n <= kMaxFoldElements) << c.where() << "a constant of shape " << shape_str(shape)
                                        << " (" << n << " elements) is too large";
  Tensor t(fill.dtype(), shape);
  const size_t es = dtype_size(fill.dtype());
  for (int64_t i = 0; i < n; i++) std::memcpy(t.raw() + i * es, fill.raw(), es);
  return t;
}

void convert_constant_of_shape(NodeContext& c) {
  const std::vector<int64_t> shape = c.const_ints(0, "ConstantOfShape shape");
  Tensor fill = Tensor::scalar<float>(0.f);
  if (const onnx::TensorProto* p = c.attr_tensor("value")) {
    fill = tensor_from_proto(*p, c.where() + "attribute 'value'");
    TLM_USER_CHECK(fill.numel() == 1) << c.where() << "attribute 'value' must hold one element";
  }
  c.set_output(0, c.add_constant(filled(c, fill, shape, "ConstantOfShape shape"), "value"));
}

void convert_identity(NodeContext& c) { c.set_output(0, c.input(0)); }

// Dropout at inference is the identity; the ratio input is irrelevant, the mask unsupported.
void convert_dropout(NodeContext& c) {
  ValueId x = c.input(0);
  if (c.opset >= 12 && c.has_input(2)) {
    const Tensor& mode = c.const_input(2, "Dropout training_mode");
    TLM_USER_CHECK(mode.numel() == 1) << c.where() << "training_mode must hold one value";
    if (mode.get_i(0) != 0)
      c.unsupported_attr("training_mode", "true (tlm imports inference graphs)");
  }
  c.set_output(0, x);
  c.forbid_output(1, "Dropout's mask output is not supported (tlm imports inference graphs)");
}

// Pad (opset 11+: pads and the constant value as inputs) is written with ops the IR has: per
// padded axis a Concat of the border and the value, the border being a constant of the pad value
// (mode constant), copies of the edge slice (edge) or the mirrored slice (reflect, a Slice with
// step -1). prepare_graph's fold_zero_padding then moves a zero border into the Conv or
// AveragePool that reads it (torch exports AvgPool2d(padding, count_include_pad) and
// TensorFlow's SAME convolutions that way), so the common cases cost nothing. Negative pads
// (cropping) are refused, naming the attribute.
void convert_pad(NodeContext& c) {
  ValueId x = c.input(0);
  const std::string mode = c.attr_string("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    c.unsupported_attr("mode", mode + " (tlm pads with constant, edge or reflect)");
  const int64_t r = c.rank(x);
  std::vector<int64_t> pads = c.const_ints(1, "Pad pads", 2 * 64);
  c.check_list("pads", pads, 2 * (size_t)r, std::numeric_limits<int64_t>::min(),
               std::numeric_limits<int64_t>::max());
  for (int64_t p : pads)
    if (p < 0) c.unsupported_attr("pads", shape_str(pads) + " (negative pads crop; not supported)");
  const DType dt = c.value(x).dtype;
  Tensor fill(dt, {});  // zero of x's dtype unless constant_value says otherwise
  if (c.has_input(2)) {
    fill = c.const_input(2, "Pad constant_value");
    TLM_USER_CHECK(fill.numel() == 1 && fill.dtype() == dt)
        << c.where() << "constant_value must be one value of the input's type";
  }
  for (int64_t a = 0; a < r; a++) {
    const int64_t before = pads[a], after = pads[a + r];
    if (before == 0 && after == 0) continue;
    const Shape xs = c.shape(x);
    const int64_t dim = xs[a];
    if (mode == "reflect")
      TLM_USER_CHECK(before < dim && after < dim)
          << c.where() << "reflect pads " << before << " and " << after << " of axis " << a
          << " must be smaller than its extent " << dim;
    if (mode == "edge") TLM_USER_CHECK(dim > 0) << c.where() << "edge pad of an empty axis";
    // The border of `n` elements before (front) or after x along axis a.
    const auto border = [&](int64_t n, bool front) -> std::vector<ValueId> {
      if (n == 0) return {};
      if (mode == "constant") {
        Shape bs = xs;
        bs[a] = n;
        return {c.add_constant(filled(c, fill, bs, "Pad border"),
                               "border" + std::to_string(a) + (front ? "b" : "e"))};
      }
      std::vector<int64_t> starts(r, 0), ends(xs.begin(), xs.end()), steps(r, 1);
      if (mode == "edge") {
        starts[a] = front ? 0 : dim - 1;
        ends[a] = starts[a] + 1;
        ValueId edge = c.add(Op::Slice, {x}, {{"starts", starts}, {"ends", ends}, {"steps", steps}},
                              "edge" + std::to_string(a) + (front ? "b" : "e"));
        return std::vector<ValueId>(n, edge);
      }
      // reflect: x[n], ..., x[1] before; x[dim-2], ..., x[dim-1-n] after.
      starts[a] = front ? n : dim - 2;
      ends[a] = front ? 0 : dim - 2 - n;
      if (ends[a] == -1) ends[a] = -dim - 1;  // "through index 0" (convert_slice)
      steps[a] = -1;
      return {c.add(Op::Slice, {x}, {{"starts", starts}, {"ends", ends}, {"steps", steps}},
                    "mirror" + std::to_string(a) + (front ? "b" : "e"))};
    };
    std::vector<ValueId> parts = border(before, true);
    parts.push_back(x);
    for (ValueId v : border(after, false)) parts.push_back(v);
    x = c.add(Op::Concat, parts, {{"axis", a}}, "pad" + std::to_string(a));
  }
  c.set_output(0, x);
}

}  // namespace

const std::vector<OnnxOpRow>& shape_op_rows() {
  // op_type, converter, min inputs, max inputs, max outputs, constant-input mask
  static const std::vector<OnnxOpRow> rows = {
      {"Reshape", convert_reshape, 2, 2, 1, 0b10},
      {"Flatten", convert_flatten, 1, 1, 1, 0},
      {"Transpose", convert_transpose, 1, 1, 1, 0},
      {"Squeeze", convert_squeeze, 1, 2, 1, 0b10},
      {"Unsqueeze", convert_unsqueeze, 1, 2, 1, 0b10},
      {"Concat", convert_concat, 1, kVariadic, 1, 0},
      {"Slice", convert_slice, 3, 5, 1, 0b11110},
      {"Split", convert_split, 1, 2, kVariadic, 0b10},
      {"Gather", convert_gather, 2, 2, 1, 0},
      {"Expand", convert_expand, 2, 2, 1, 0b10},
      {"Shape", convert_shape, 1, 1, 1, 0},
      {"Constant", convert_constant, 0, 0, 1, 0},
      {"ConstantOfShape", convert_constant_of_shape, 1, 1, 1, 0b1},
      {"Identity", convert_identity, 1, 1, 1, 0},
      {"Dropout", convert_dropout, 1, 3, 2, 0b100},
      {"Pad", convert_pad, 1, 4, 1, 0b110},
  };
  return rows;
}

}  // namespace frontend
}  // namespace tlm
