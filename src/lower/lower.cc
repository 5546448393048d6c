// The lowering driver and the plumbing around it: one ImageParam per subgraph input (exact static
// bounds and dense strides), one table row per Op (lower_<Op> in the family files), the output
// copy stage, halide_view, JIT compilation and running, and the host target.
//
// Knobs: none of its own; host_target() exports the one threads knob (support/threads.h) to
// Halide's thread pool before its first use.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "hardware/hardware.h"
#include "lower/lower_internal.h"
#include "support/huge_pages.h"
#include "support/spin_pool.h"
#include "support/threads.h"

namespace tlm {
namespace lower_detail {
namespace {

using LowerFn = void (*)(Ctx&, const Node&);
constexpr LowerFn kLowerFns[] = {
#define TLM_LOWER_ROW(name, pattern) &lower_##name,
    TLM_OP_LIST(TLM_LOWER_ROW)
#undef TLM_LOWER_ROW
};
static_assert(sizeof(kLowerFns) / sizeof(kLowerFns[0]) == kOpCount, "one lowering per op");

// Halide names may not contain '.', and short readable names help when reading loop nests.
std::string sanitize(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (std::isalnum((unsigned char)ch)) out += (char)std::tolower((unsigned char)ch);
    if (out.size() >= 24) break;
  }
  return out;
}

// Halide Int(32) index arithmetic: every extent and flat size must fit.
void check_shape_fits(const std::string& what, const Shape& s) {
  int64_t n = 1;
  for (int64_t e : s) {
    if (e < 0 || e > INT32_MAX) TLM_USER_ERROR() << what << ": extent " << e << " out of range";
    n *= std::max<int64_t>(e, 1);
    if (n > INT32_MAX)
      TLM_USER_ERROR() << what << ": shape " << shape_str(s) << " has more than 2^31 elements";
  }
}

Halide::Buffer<> constant_buffer(const Tensor& t) {
  std::vector<int> sizes;
  for (int d = t.rank() - 1; d >= 0; d--) sizes.push_back((int)t.shape()[d]);
  Halide::Buffer<> b(halide_type(t.dtype()), sizes);
  if (t.nbytes()) std::memcpy(b.data(), t.raw(), t.nbytes());
  return b;
}

Expr constant_scalar(const Tensor& t) {
  switch (t.dtype()) {
    case DType::F32:
      return Expr(t.data<float>()[0]);
    case DType::I64:
      return Expr(t.data<int64_t>()[0]);
    case DType::Bool:
      return Halide::cast<uint8_t>(t.data<bool>()[0] ? 1 : 0);
  }
  TLM_INTERNAL_ERROR() << "dtype";
  __builtin_unreachable();  // the error builder throws
}

std::vector<int64_t> reversed(const Shape& s) { return std::vector<int64_t>(s.rbegin(), s.rend()); }

}  // namespace

Halide::Type halide_type(DType t) {
  switch (t) {
    case DType::F32:
      return Halide::Float(32);
    case DType::I64:
      return Halide::Int(64);
    case DType::Bool:
      return Halide::UInt(8);
  }
  TLM_INTERNAL_ERROR() << "dtype";
  __builtin_unreachable();  // the error builder throws
}

const Shape& shape_of(const Ctx& c, ValueId v) { return c.g.value(v).shape; }

Expr read(const Ctx& c, ValueId v, const Index& idx) {
  TLM_CHECK(v != kNoValue) << "read of an absent value";
  const Source& s = c.src.at(v);
  TLM_CHECK(idx.size() == shape_of(c, v).size())
      << "value " << c.g.value(v).name << " read with " << idx.size() << " indices";
  std::vector<Expr> h(idx.rbegin(), idx.rend());
  switch (s.kind) {
    case Source::kScalar:
      return s.scalar;
    case Source::kFunc:
      return s.func(h);
    case Source::kParam: {
      if (s.block == 0) return s.param(h);
      std::vector<Expr> b = {h[s.block_dim] % s.block};
      for (size_t d = 0; d < h.size(); d++)
        if ((int)d != s.block_dim) b.push_back(h[d]);
      b.push_back(h[s.block_dim] / s.block);
      return s.param(b);
    }
    case Source::kBuffer:
      return s.buffer(h);
    case Source::kNone:
      break;
  }
  TLM_INTERNAL_ERROR() << "value " << c.g.value(v).name << " read before it is defined";
  __builtin_unreachable();
}

Index broadcast_index(const Shape& in, const Shape& out, const Index& out_idx) {
  TLM_CHECK(in.size() <= out.size())
      << "broadcast from " << shape_str(in) << " to " << shape_str(out);
  Index idx(in.size());
  size_t off = out.size() - in.size();
  for (size_t d = 0; d < in.size(); d++) {
    TLM_CHECK(in[d] == 1 || in[d] == out[d + off])
        << "cannot broadcast " << shape_str(in) << " to " << shape_str(out);
    idx[d] = in[d] == 1 ? Expr(0) : out_idx[d + off];
  }
  return idx;
}

PureFunc new_func(Ctx& c, const Node& n, const std::string& what, const Shape& shape) {
  check_shape_fits(n.name, shape);
  PureFunc p;
  std::string name = "f" + std::to_string(c.name_counter++) + "_" + sanitize(op_name(n.op));
  if (!what.empty()) name += "_" + what;
  p.f = Func(name);
  int r = (int)shape.size();
  for (int k = 0; k < r; k++) p.vars.push_back(Var("d" + std::to_string(k)));
  for (int d = 0; d < r; d++) p.idx.push_back(p.vars[r - 1 - d]);
  p.shape = shape;
  return p;
}

Reduction new_rdom(Ctx& c, const Node& n, const std::string& what,
                   const std::vector<int64_t>& extents) {
  Reduction red;
  Halide::Region region;
  for (int j = (int)extents.size() - 1; j >= 0; j--) {
    TLM_USER_CHECK(extents[j] >= 0 && extents[j] <= INT32_MAX)
        << "node '" << n.name << "' (" << op_name(n.op) << "): reduction extent " << extents[j];
    region.push_back(Halide::Range(0, (int)extents[j]));
    red.rextents.push_back(extents[j]);
  }
  TLM_CHECK(!region.empty()) << "empty reduction domain for " << n.name;
  red.rdom = Halide::RDom(region, "r" + std::to_string(c.name_counter++) + "_" + what);
  int k = (int)extents.size();
  red.rv.resize(k);
  for (int j = 0; j < k; j++) red.rv[j] = red.rdom[k - 1 - j];
  return red;
}

int add_stage(Ctx& c, const PureFunc& p, const Node& n, StageRole role, const Reduction* r) {
  Stage s;
  s.func = p.f;
  s.node = &n;
  s.vars = p.vars;
  s.role = role;
  s.extents = reversed(p.shape);
  if (r) {
    s.rdom = r->rdom;
    s.rextents = r->rextents;
    s.has_update = true;
  }
  c.stages.push_back(std::move(s));
  int index = (int)c.stages.size() - 1;
  if (role == StageRole::Anchor || role == StageRole::Reused) c.anchor = index;
  return index;
}

void bind(Ctx& c, const Node& n, const PureFunc& p) {
  TLM_CHECK(n.outputs.size() == 1) << "node " << n.name << " must have one output";
  const Value& v = c.g.value(n.outputs[0]);
  TLM_CHECK(p.shape == v.shape) << "node " << n.name << " lowered to shape " << shape_str(p.shape)
                                << ", expected " << shape_str(v.shape);
  TLM_CHECK(p.f.defined() && p.f.output_types()[0] == halide_type(v.dtype))
      << "node " << n.name << " lowered to type " << p.f.output_types()[0] << ", expected "
      << dtype_name(v.dtype);
  Source& s = c.src[n.outputs[0]];
  s.kind = Source::kFunc;
  s.func = p.f;
}

Expr call(const PureFunc& p, const Index& idx) {
  std::vector<Expr> h(idx.rbegin(), idx.rend());
  return p.f(h);
}

PureFunc pad_value(Ctx& c, const Node& n, ValueId v, Expr pad) {
  const Shape& s = shape_of(c, v);
  PureFunc p = new_func(c, n, "pad", s);
  p.shape = s;
  Expr inside = Halide::Internal::const_true();
  Index clamped(s.size());
  for (size_t d = 0; d < s.size(); d++) {
    Expr i = p.idx[d];
    inside = inside && i >= 0 && i < (int)s[d];
    clamped[d] = Halide::clamp(i, 0, (int)s[d] - 1);
  }
  p.f(p.vars) = Halide::select(inside, Halide::likely(read(c, v, clamped)), pad);
  add_stage(c, p, n, StageRole::Pad);
  return p;
}

std::vector<int64_t> ints_n(const Node& n, const std::string& key, size_t count, int64_t def) {
  if (!n.has(key)) return std::vector<int64_t>(count, def);
  std::vector<int64_t> v = n.ints(key);
  if (v.size() != count)
    bad_node(n, "attribute '" + key + "' has " + std::to_string(v.size()) + " entries, expected " +
                    std::to_string(count));
  return v;
}

void bad_node(const Node& n, const std::string& what) {
  TLM_USER_ERROR() << "cannot lower node '" << n.name << "' (" << op_name(n.op) << "): " << what;
  __builtin_unreachable();
}

}  // namespace lower_detail

using namespace lower_detail;

LoweredTask::LoweredTask(const LoweredTask& o) { *this = o; }

LoweredTask& LoweredTask::operator=(const LoweredTask& o) {
  if (this == &o) return *this;
  sub = o.sub;
  inputs = o.inputs;
  stages = o.stages;
  anchor = o.anchor;
  input_storage = o.input_storage;
  for (Stage& s : stages)
    if (s.node) s.node = &sub.graph.nodes.at(s.node - o.sub.graph.nodes.data());
  return *this;
}

LoweredTask lower_subgraph(const Subgraph& sub, const std::vector<InputLayout>& blocked) {
  LoweredTask t;
  t.sub = sub;
  const Graph& g = t.sub.graph;
  TLM_USER_CHECK(g.outputs.size() == 1)
      << "subgraph '" << g.name << "' has " << g.outputs.size() << " outputs, expected 1";
  Ctx c(g);

  TLM_CHECK(blocked.empty() || blocked.size() == g.inputs.size())
      << "lower_subgraph: " << blocked.size() << " layouts for " << g.inputs.size() << " inputs";
  for (size_t i = 0; i < g.inputs.size(); i++) {
    const Value& v = g.value(g.inputs[i]);
    check_shape_fits("input " + v.name, v.shape);
    InputLayout layout;  // storage_dims() checks a blocked one
    if (!blocked.empty() && blocked[i].block > 0) layout = blocked[i];
    const std::vector<halide_dimension_t> dims = storage_dims(v.shape, layout);
    Halide::ImageParam p(halide_type(v.dtype), (int)dims.size(),
                         "in" + std::to_string(i) + "_" + sanitize(v.name));
    for (size_t k = 0; k < dims.size(); k++)
      p.dim((int)k).set_bounds(0, dims[k].extent).set_stride(dims[k].stride);
    Source& s = c.src[g.inputs[i]];
    s.kind = Source::kParam;
    s.param = p;
    s.block_dim = layout.block_dim;
    s.block = layout.block;
    t.inputs.push_back(p);
    if (layout.block > 0) {
      t.input_storage.resize(g.inputs.size());
      t.input_storage[i] = layout;
    }
  }
  for (size_t id = 0; id < g.values.size(); id++) {
    const Value& v = g.values[id];
    if (!v.is_constant()) continue;
    Source& s = c.src[id];
    if (v.data->numel() == 1) {
      s.kind = Source::kScalar;
      s.scalar = constant_scalar(*v.data);
    } else {
      check_shape_fits("constant " + v.name, v.shape);
      s.kind = Source::kBuffer;
      s.buffer = constant_buffer(*v.data);
    }
  }

  for (const Node& n : g.nodes) {
    TLM_CHECK(n.outputs.size() == 1)
        << "node " << n.name << " has " << n.outputs.size() << " outputs";
    for (ValueId in : n.inputs)
      TLM_CHECK(in == kNoValue || c.src.at(in).kind != Source::kNone)
          << "node " << n.name << " reads a value that is not computed before it";
    const Value& out = g.value(n.outputs[0]);
    if (numel(out.shape) == 0) {
      // An empty tensor is never read; keep a well-typed placeholder.
      PureFunc p = new_func(c, n, "empty", out.shape);
      p.f(p.vars) = Halide::Internal::make_zero(halide_type(out.dtype));
      add_stage(c, p, n, StageRole::Pure);
      bind(c, n, p);
      continue;
    }
    kLowerFns[(int)n.op](c, n);
  }

  // The output is always a pure Func of its own, so that anchors and reductions can be computed
  // inside its tiles (a Func with an update cannot be inlined into nothing).
  ValueId out = g.outputs[0];
  const Source& os = c.src.at(out);
  bool needs_copy = os.kind != Source::kFunc || c.stages.empty() ||
                    c.stages.back().func.name() != os.func.name() || c.stages.back().has_update;
  if (needs_copy) {
    const Value& v = g.value(out);
    TLM_USER_CHECK(os.kind != Source::kNone) << "subgraph output " << v.name << " is not computed";
    Node* last = g.nodes.empty() ? nullptr : const_cast<Node*>(&g.nodes.back());
    for (const Node& n : g.nodes)
      if (n.outputs[0] == out) last = const_cast<Node*>(&n);
    TLM_USER_CHECK(last != nullptr) << "subgraph '" << g.name << "' has no nodes";
    PureFunc p = new_func(c, *last, "out", v.shape);
    p.f(p.vars) = read(c, out, p.idx);
    add_stage(c, p, *last, StageRole::Pure);
  }
  t.stages = std::move(c.stages);
  t.anchor = c.anchor;
  const Value& ov = g.value(out);
  Halide::OutputImageParam ob = t.output().output_buffer();
  int r = (int)ov.shape.size();
  int64_t stride = 1;
  for (int k = 0; k < r; k++) {
    int64_t e = ov.shape[r - 1 - k];
    ob.dim(k).set_bounds(0, (int)e).set_stride((int)stride);
    stride *= std::max<int64_t>(e, 1);
  }
  return t;
}

Halide::Buffer<> halide_view(DType dtype, void* data, const Shape& shape) {
  int r = (int)shape.size();
  std::vector<halide_dimension_t> dims(r);
  int64_t stride = 1;
  for (int k = 0; k < r; k++) {
    int64_t e = shape[r - 1 - k];
    TLM_CHECK(e >= 0 && e <= INT32_MAX && stride <= INT32_MAX)
        << "halide_view: shape " << shape_str(shape) << " too large";
    dims[k] = halide_dimension_t(0, (int32_t)e, (int32_t)stride);
    stride *= std::max<int64_t>(e, 1);
  }
  return Halide::Buffer<>(halide_type(dtype), data, r, dims.data());
}

namespace {

using HalideBody = int (*)(Halide::JITUserContext*, int, uint8_t*);

int run_halide_body(const ParJob& job, int index) {
  return reinterpret_cast<HalideBody>(job.fn)(static_cast<Halide::JITUserContext*>(job.ctx), index,
                                              job.closure);
}

// The pipelines' parallel loops run on support/spin_pool.h's workers (TLM_SPIN_US=0: Halide's).
int spin_do_par_for(Halide::JITUserContext* ctx, HalideBody f, int min, int extent,
                    uint8_t* closure) {
  return spin_par_for(ParJob{run_halide_body, reinterpret_cast<void*>(f), ctx, closure}, min,
                      extent);
}

}  // namespace

CompiledTask compile_task(const LoweredTask& t, const Halide::Target& target) {
  CompiledTask ct;
  ct.pipeline_ = Halide::Pipeline(t.output());
  if (spin_microseconds() > 0) ct.pipeline_.jit_handlers().custom_do_par_for = spin_do_par_for;
  ct.params_ = t.inputs;
  ct.input_storage_ = t.input_storage;
  ct.input_storage_.resize(t.inputs.size());
  ct.target_ = target;
  ct.pipeline_.compile_jit(target);
  return ct;
}

void write_task_code(const LoweredTask& t, const Halide::Target& target,
                     const std::string& prefix) {
  Halide::Pipeline p(t.output());
  std::vector<Halide::Argument> args(t.inputs.begin(), t.inputs.end());
  std::string name = "task";
  try {
    p.compile_to_lowered_stmt(prefix + ".stmt", args, Halide::Text, target);
    p.compile_to_assembly(prefix + ".s", args, name, target);
  } catch (const Halide::CompileError& e) {
    TLM_USER_ERROR() << "cannot write " << prefix << ".{stmt,s}: " << e.what();
  }
  std::ifstream probe(prefix + ".s");
  TLM_USER_CHECK(probe.good()) << "cannot write " << prefix << ".s";
}

void CompiledTask::run(const std::vector<Halide::Buffer<>>& inputs, Halide::Buffer<>& output) {
  TLM_CHECK(pipeline_.defined()) << "CompiledTask::run on a task that was never compiled";
  TLM_CHECK(inputs.size() == params_.size())
      << "CompiledTask::run: " << inputs.size() << " inputs, expected " << params_.size();
  Halide::ParamMap pm;
  std::vector<Halide::Buffer<>> repacked(params_.size());
  for (size_t i = 0; i < params_.size(); i++) {
    if (in_layout(i, inputs[i])) {
      pm.set(params_[i], inputs[i]);
    } else {
      repacked[i] = prepare_input(i, inputs[i]);
      pm.set(params_[i], repacked[i]);
    }
  }
  pipeline_.realize(Halide::Pipeline::RealizationArg(output), target_, pm);
}

// True when `b` already has input j's layout: its dims are those storage_dims() gives (dense
// inputs: any buffer, Halide checks it).
bool CompiledTask::in_layout(size_t j, const Halide::Buffer<>& b) const {
  const InputLayout& layout = input_storage_.at(j);
  if (layout.dense() || !b.defined()) return true;
  if (b.dimensions() != params_[j].dimensions()) return false;
  if (layout.block > 0) {  // rank + 1, dense, blocks of the right size
    int64_t stride = 1;
    for (int d = 0; d < b.dimensions(); d++) {
      if (b.dim(d).stride() != stride || b.dim(d).min() != 0) return false;
      stride *= std::max(1, b.dim(d).extent());
    }
    return b.dim(0).extent() == layout.block;
  }
  int64_t stride = 1;
  for (int d : layout.order) {
    if (d >= b.dimensions() || b.dim(d).stride() != stride) return false;
    stride *= std::max(1, b.dim(d).extent());
  }
  return true;
}

Halide::Buffer<> CompiledTask::prepare_input(size_t j, const Halide::Buffer<>& dense) const {
  TLM_CHECK(j < input_storage_.size())
      << "prepare_input: input " << j << " of " << input_storage_.size();
  if (in_layout(j, dense)) return dense;
  return packed_copy(dense, input_storage_[j]);
}

std::vector<halide_dimension_t> storage_dims(const Shape& shape, const InputLayout& layout) {
  const int r = (int)shape.size();
  std::vector<int64_t> extent(r);
  for (int d = 0; d < r; d++) extent[d] = shape[r - 1 - d];  // Halide dim d = ONNX dim r-1-d
  std::vector<halide_dimension_t> dims;
  if (layout.block > 0) {
    const int bd = layout.block_dim;
    TLM_CHECK(bd >= 0 && bd < r) << "storage_dims: block dim " << bd << " of rank " << r;
    std::vector<int64_t> e = {layout.block};
    for (int d = 0; d < r; d++)
      if (d != bd) e.push_back(extent[d]);
    e.push_back((extent[bd] + layout.block - 1) / layout.block);
    int64_t stride = 1;
    for (int64_t x : e) {
      dims.push_back(halide_dimension_t(0, (int32_t)x, (int32_t)stride));
      stride *= std::max<int64_t>(1, x);
    }
    TLM_USER_CHECK(stride <= INT32_MAX) << "blocked layout of " << shape_str(shape) << " too large";
    return dims;
  }
  std::vector<int> order = layout.order;
  if (order.empty())
    for (int d = 0; d < r; d++) order.push_back(d);
  dims.assign(r, halide_dimension_t(0, 0, 0));
  int64_t s = 1;
  for (int d : order) {
    dims[d] = halide_dimension_t(0, (int32_t)extent[d], (int32_t)s);
    s *= std::max<int64_t>(1, extent[d]);
  }
  return dims;
}

Halide::Buffer<> packed_copy(const Halide::Buffer<>& dense, const InputLayout& layout) {
  const int r = dense.dimensions();
  Shape shape(r);
  for (int d = 0; d < r; d++) shape[r - 1 - d] = dense.dim(d).extent();
  const std::vector<halide_dimension_t> dims = storage_dims(shape, layout);
  // The layout's dims, allocated once, on huge pages (support/huge_pages.h).
  Halide::Buffer<> packed(dense.type(), nullptr, (int)dims.size(), dims.data());
  packed.allocate(huge_alloc, std::free);
  if (layout.block == 0) {
    packed.copy_from(dense);
    return packed;
  }
  const size_t esize = dense.type().bytes();
  std::memset(packed.data(), 0, packed.size_in_bytes());
  // Element by element: packed (i % B, others..., i / B) <- dense (..., i, ...).
  const int bd = layout.block_dim, B = layout.block;
  const uint8_t* src = static_cast<const uint8_t*>(dense.data());
  uint8_t* dst = static_cast<uint8_t*>(packed.data());
  std::vector<int> pos(r, 0);
  const int64_t n = dense.number_of_elements();
  for (int64_t k = 0; k < n; k++) {
    int64_t from = 0, to = (int64_t)(pos[bd] % B) * dims[0].stride;
    for (int d = 0, o = 1; d < r; d++) {
      from += (int64_t)pos[d] * dense.dim(d).stride();
      if (d != bd) to += (int64_t)pos[d] * dims[o++].stride;
    }
    to += (int64_t)(pos[bd] / B) * dims[r].stride;
    std::memcpy(dst + to * esize, src + from * esize, esize);
    for (int d = 0; d < r && ++pos[d] == dense.dim(d).extent(); d++) pos[d] = 0;
  }
  return packed;
}

bool CompiledTask::has_prepacked_inputs() const {
  for (const InputLayout& l : input_storage_)
    if (!l.dense()) return true;
  return false;
}

Halide::Target host_target() {
  static const Halide::Target target = [] {
    // Halide's thread pool reads HL_NUM_THREADS when it first starts.
    export_halide_threads();
    TLM_CHECK(Halide::exceptions_enabled()) << "Halide must be built with exceptions";
    Halide::Target t = Halide::get_host_target();
    // Halide 14 calls any CPU with AVX512-BF16 and VNNI "sapphirerapids", and LLVM then emits
    // AVX512-FP16 instructions (vmovw for bool vectors): an AMD Zen 4 has the former but not
    // the latter, and dies of SIGILL. Keep that family only where the CPU has AVX512-FP16.
    if (t.has_feature(Halide::Target::AVX512_SapphireRapids) && !host_cpu_has("avx512_fp16"))
      t = t.without_feature(Halide::Target::AVX512_SapphireRapids);
    // get_host_target() already lists the AVX-512 families the CPU has (skylake, cannonlake,
    // sapphirerapids); make sure the base feature is there whenever one of them is.
    if (t.has_feature(Halide::Target::AVX512_Skylake) ||
        t.has_feature(Halide::Target::AVX512_Cannonlake) ||
        t.has_feature(Halide::Target::AVX512_SapphireRapids))
      t = t.with_feature(Halide::Target::AVX512);
    return t;
  }();
  return target;
}

}  // namespace tlm
