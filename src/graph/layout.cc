// block_channels (graph/passes.h): ONNX Runtime's NCHWc rewrite as a tlm graph pass
// (docs/layout.md). Walks the graph in order and builds a new one in which
//
//   Conv (2-D, constant W and bias; group 1 or depthwise) -> ConvNchwc over [N, ceil(C/B), H, W, B]
//        values: the input blocked when it already is or Ci % B == 0, read plain otherwise (the
//        stem); W folded to [Co'/B, Ci'/B, kh, kw, B, B] over a blocked input, to
//        [Co'/B, Cg', kh, kw, B] over a plain one or depthwise; bias to [Co'/B, B]
//   elementwise ops whose tensor inputs all exist blocked with the output's 4-D shape (scalar
//        constants broadcast as they are; per-channel operands [N or 1, C, 1, 1], the scale of a
//        squeeze-and-excitation block or a per-channel constant, converted -- small -- and
//        broadcast as [., C'/B, 1, 1, B]) -> the same op on the blocked values
//   GlobalAveragePool of a blocked value read only by Convs (the squeeze of an SE block) ->
//        AveragePool with an H x W x 1 window over the 5-D value, [N, C'/B, 1, 1, B] (a pool
//        like the blocked ones above: the shipped ranker chose the best of the language model's
//        programs on EfficientNet-B0's squeezes, where as a ReduceMean over H, W it chose
//        programs 6x slower, reductions rfactored along W, a stride of B); any other over a blocked
//        value (a classifier's head) -> the same pool over a plain view of its own, which fuses
//        into the pool's task as its prologue (the value is not converted in full for it)
//   MaxPool / AveragePool (2-D) over a blocked value -> the same pool over the 5-D value with a
//        window of 1 on the lane dim
//   Concat along the channels of values that all exist blocked, each with a multiple of B
//        channels (Inception's branches, SqueezeNet's fire modules, DenseNet's growth) -> Concat
//        of the blocked values along the channel-block dim: the same memory order, no round trip
//        through the plain layout
//
//   1x1 Conv, stride 1, no padding, over a blocked input whose width is at most kFlatWidth
//        -> ConvNchwc over the pixels flattened, [N, C/B, 1, H*W, B] (the same memory; a Reshape
//        view, converted once per value like the layouts): MLAS's pointwise kernel walks the H*W
//        pixels as one row, so a register block of 3 pixels wastes 2 of 51 on a 7x7 map instead
//        of 14 of 63 (or 1 of 8 for 2), measured 1.15x faster on 7x7 maps at 2 threads on Zen 3
//        (BENCHMARKS.md, "Pointwise convolutions over the flattened pixels"). Elementwise
//        ops with a flattened input run flattened; every other consumer reads the value
//        unflattened (a Reshape back, affine in the reader's index).
//   1x1 Conv, stride s > 1, no padding, whose output is at most kFlatWidth wide (ResNet's
//        downsampling shortcuts) -> a Slice with steps [1, 1, s, s, 1] of the blocked input, its
//        pixels flattened, and the 1x1 ConvNchwc with unit stride over them, written flattened
//        (the Slice and Reshape fuse into the conv's task as a prologue; measured 5-12% faster
//        on ResNet-50's two such layers at one thread on Zen 3, BENCHMARKS.md session 62).
// and copies every other node, reading plain values. A channel count C that is not a multiple of
// B is padded to C' = B * ceil(C/B) when that wastes at most half of C (MobileNet-V2's 24
// channels -> 32 for B = 16): the padded lanes hold zeros -- zero weights and bias, and only ops
// that keep zeros (relu, clip around 0, add, mul, ...) run on padded values -- and the
// convolutions reading them have zero weights there. A value is converted between the layouts
// only where a consumer needs the other one, once: plain -> blocked is [Concat zeros +] Reshape
// [N, C'/B, B, H, W] + Transpose (0 1 3 4 2); blocked -> plain is Transpose (0 1 4 2 3) + Reshape
// [N, C', H, W] [+ Slice to C] (injective ops: the partitioner fuses them into their neighbours'
// tasks). Graph outputs stay plain and keep their names, so the rewritten graph computes the same
// function.
#include <cstdlib>
#include <limits>
#include <map>
#include <utility>

#include "graph/passes.h"
#include "support/error.h"

namespace tlm {
namespace {

// Widest map whose pointwise convolutions run over the flattened pixels: the widths of 7 and 14
// have no whole block of 3 pixels (and 7 none of 2); at 28 the gain measured nothing.
// TLM_FLAT_PIXELS=0 turns the flattening off (for A/B runs, as TLM_WEIGHT_BLOCKS=0).
constexpr int64_t kFlatWidth = 14;

bool flat_pixels_enabled() {
  const char* env = std::getenv("TLM_FLAT_PIXELS");
  return env == nullptr || std::string(env) != "0";
}

class Blocker {
 public:
  Blocker(const Graph& g, int64_t block, bool flat_pixels)
      : g_(g),
        B_(block),
        flat_ok_(flat_pixels && flat_pixels_enabled()),
        consumers_(g.consumers()) {
    out_.name = g.name;
    plain_.assign(g.values.size(), kNoValue);
    blocked_.assign(g.values.size(), kNoValue);
    flat_.assign(g.values.size(), kNoValue);
  }

  Graph run() {
    for (ValueId v : g_.inputs) {
      const Value& val = g_.value(v);
      plain_[v] = out_.add_input(val.name, val.dtype, val.shape);
    }
    for (const Node& n : g_.nodes) {
      TLM_CHECK(n.outputs.size() == 1)
          << "block_channels: node " << n.name << " has " << n.outputs.size() << " outputs";
      if (!(n.op == Op::Conv && try_conv(n)) && !(is_pool(n) && try_pool(n)) &&
          !(n.op == Op::Concat && try_concat(n)) &&
          !(n.op == Op::GlobalAveragePool && try_global_pool(n)) &&
          !(op_pattern(n.op) == OpPattern::Elemwise && try_elemwise(n)))
        copy(n);
    }
    for (ValueId o : g_.outputs) out_.mark_output(plain(o));
    out_.remove_dead();
    return std::move(out_);
  }

 private:
  const Shape& shape(ValueId v) const { return g_.value(v).shape; }
  const Shape& shape_of(ValueId new_v) const { return out_.value(new_v).shape; }
  int64_t padded(int64_t c) const { return (c + B_ - 1) / B_ * B_; }
  // C channels can be blocked: a multiple of B, or padded to one wasting at most half of C.
  bool paddable(int64_t c) const { return c % B_ == 0 || (c >= B_ && 2 * padded(c) <= 3 * c); }

  // t (a value of the new graph) with dim `axis` zero-padded from its extent to `to` (folded at
  // once when t is a constant).
  ValueId pad_zeros(ValueId t, int axis, int64_t to, const std::string& name) {
    Shape zs = out_.value(t).shape;
    if (zs[axis] == to) return t;
    zs[axis] = to - zs[axis];
    ValueId z = out_.add_constant(name + "/zeros", Tensor(DType::F32, zs));
    return out_.add(Op::Concat, {t, z}, {{"axis", int64_t(axis)}}, name + "/padded");
  }

  // Whether v exists blocked, 2-D or with its pixels flattened.
  bool has_blocked(ValueId v) const { return blocked_[v] != kNoValue || flat_[v] != kNoValue; }

  // The value in the plain layout, converting (once) a value that so far exists only blocked.
  ValueId plain(ValueId v) {
    if (v == kNoValue) return kNoValue;
    if (plain_[v] != kNoValue) return plain_[v];
    const Value& val = g_.value(v);
    if (val.is_constant()) {
      out_.values.push_back(val);  // shares the tensor
      return plain_[v] = (ValueId)out_.values.size() - 1;
    }
    TLM_CHECK(has_blocked(v)) << "block_channels: value " << val.name << " has no layout";
    plain_[v] = plain_view(v);
    out_.value(plain_[v]).name = val.name;  // the original value, e.g. a graph output
    return plain_[v];
  }

  // A plain view of the blocked value v: Transpose (0 1 4 2 3) + Reshape [N, C', H, W]
  // [+ Slice to C]. plain() makes one, once, for every reader; a GlobalAveragePool gets its own,
  // which fuses into its task as the prologue.
  ValueId plain_view(ValueId v) {
    const Shape& s = shape(v);
    const std::string& name = g_.value(v).name;
    ValueId t = out_.add(Op::Transpose, {blocked(v)},
                         {{"perm", std::vector<int64_t>{0, 1, 4, 2, 3}}}, name + "/to_nchw_t");
    const int64_t cp = padded(s[1]);
    ValueId r =
        out_.add(Op::Reshape, {t}, {{"shape", Shape{s[0], cp, s[2], s[3]}}}, name + "/to_nchw");
    if (cp == s[1]) return r;
    return out_.add(Op::Slice, {r},
                    {{"starts", std::vector<int64_t>{0, 0, 0, 0}},
                     {"ends", s},
                     {"steps", std::vector<int64_t>{1, 1, 1, 1}}},
                    name + "/to_nchw_s");
  }

  // The value blocked [N, C'/B, H, W, B] (paddable C), converting the plain one once.
  ValueId blocked(ValueId v) {
    if (blocked_[v] != kNoValue) return blocked_[v];
    const Shape& s = shape(v);
    const int64_t cp = padded(s[1]);
    if (flat_[v] != kNoValue)
      return blocked_[v] = out_.add(Op::Reshape, {flat_[v]},
                                    {{"shape", Shape{s[0], cp / B_, s[2], s[3], B_}}},
                                    g_.value(v).name + "/unflat");
    ValueId x = pad_zeros(plain(v), 1, cp, g_.value(v).name + "/to_nchwc");
    ValueId r = out_.add(Op::Reshape, {x}, {{"shape", Shape{s[0], cp / B_, B_, s[2], s[3]}}},
                         g_.value(v).name + "/to_nchwc_r");
    blocked_[v] = out_.add(Op::Transpose, {r}, {{"perm", std::vector<int64_t>{0, 1, 3, 4, 2}}},
                           g_.value(v).name + "/to_nchwc");
    return blocked_[v];
  }

  // The blocked value with its pixels flattened, [N, C'/B, 1, H*W, B]: the same memory.
  ValueId flat(ValueId v) {
    if (flat_[v] != kNoValue) return flat_[v];
    const Shape& s = shape(v);
    return flat_[v] = out_.add(Op::Reshape, {blocked(v)},
                               {{"shape", Shape{s[0], padded(s[1]) / B_, 1, s[2] * s[3], B_}}},
                               g_.value(v).name + "/flat");
  }

  // Every sh-th row and sw-th column of v, blocked and with the pixels flattened to the
  // `pixels` = Ho*Wo of the conv reading it: [N, C'/B, 1, Ho*Wo, B], a strided Slice of the
  // blocked value and a Reshape view of it.
  ValueId subsampled_flat(ValueId v, int64_t sh, int64_t sw, int64_t pixels) {
    const Shape& s = shape(v);
    const int64_t cb = padded(s[1]) / B_;
    const std::string& name = g_.value(v).name;
    ValueId sub = out_.add(Op::Slice, {blocked(v)},
                           {{"starts", std::vector<int64_t>{0, 0, 0, 0, 0}},
                            {"ends", Shape{s[0], cb, s[2], s[3], B_}},
                            {"steps", std::vector<int64_t>{1, 1, sh, sw, 1}}},
                           name + "/sub" + std::to_string(sh) + "x" + std::to_string(sw));
    return out_.add(Op::Reshape, {sub}, {{"shape", Shape{s[0], cb, 1, pixels, B_}}},
                    name + "/sub_flat");
  }

  // Whether every value of n's int-list attribute `key` is `want` (true when n has none).
  static bool all_are(const Node& n, const char* key, int64_t want) {
    if (!n.has(key)) return true;
    for (int64_t v : n.ints(key))
      if (v != want) return false;
    return true;
  }

  // Whether the flattening rules may touch the Conv n: 1x1, group 1, no padding or dilation.
  bool pointwise(const Node& n, const Shape& ws) const {
    return flat_ok_ && n.i("group", 1) == 1 && ws[2] == 1 && ws[3] == 1 && all_are(n, "pads", 0) &&
           all_are(n, "dilations", 1);
  }

  // Whether the Conv n runs over the flattened pixels (kFlatWidth).
  bool flattens(const Node& n, const Shape& xs, const Shape& ws) const {
    return pointwise(n, ws) && all_are(n, "strides", 1) && xs[2] > 1 && xs[3] <= kFlatWidth;
  }

  // The strides {sh, sw} of a strided 1x1 Conv n whose output is narrow enough to flatten: it
  // runs as a subsampling Slice of its input and a unit-stride 1x1 Conv over the flattened pixels
  // (kFlatWidth); {0, 0} when n is not one.
  std::pair<int64_t, int64_t> subsamples(const Node& n, const Shape& ws) const {
    if (!pointwise(n, ws) || all_are(n, "strides", 1)) return {0, 0};
    const std::vector<int64_t> s = n.ints("strides");
    const Shape& os = shape(n.outputs[0]);
    if (s.size() != 2 || s[0] < 1 || s[1] < 1 || os[2] <= 1 || os[3] > kFlatWidth) return {0, 0};
    return {s[0], s[1]};
  }

  // Copies n reading plain inputs; its output is plain.
  void copy(const Node& n) {
    std::vector<ValueId> ins;
    for (ValueId in : n.inputs) ins.push_back(plain(in));
    emit(n, n.op, ins, n.attrs, false);
  }

  void emit(const Node& n, Op op, const std::vector<ValueId>& ins, const Attrs& attrs, bool blocked,
            bool flat = false) {
    ValueId o = n.outputs[0];
    ValueId id = out_.add(op, ins, attrs, blocked ? n.name + "/nchwc" : n.name);
    out_.value(id).name = blocked ? g_.value(o).name + "/nchwc" : g_.value(o).name;
    (flat ? flat_ : blocked ? blocked_ : plain_)[o] = id;
  }

  bool try_conv(const Node& n) {
    ValueId x = n.inputs.at(0), w = n.inputs.at(1);
    ValueId b = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
    const Shape& xs = shape(x);
    const Shape& ws = shape(w);
    if (xs.size() != 4 || ws.size() != 4 || !g_.value(w).is_constant() ||
        (b != kNoValue && !g_.value(b).is_constant()) || g_.value(x).dtype != DType::F32)
      return false;
    const int64_t group = n.i("group", 1), co = ws[0], ci = xs[1];
    if (!paddable(co)) return false;
    const bool depthwise = group > 1;
    if (depthwise && !(group == ci && co == ci && ws[1] == 1)) return false;
    // The input: blocked when it is already, or when it needs no padding (a conversion of the
    // producer's output), else read plain -- except depthwise, which reads it blocked.
    // A 1x1 convolution of a narrow map reads it with the pixels flattened (kFlatWidth).
    const bool x_blocked = has_blocked(x) || ci % B_ == 0 || depthwise;
    const bool flat_in = x_blocked && !depthwise && flattens(n, xs, ws);
    const auto [sh, sw] =
        x_blocked && !depthwise ? subsamples(n, ws) : std::pair<int64_t, int64_t>{0, 0};
    const bool flat_conv = flat_in || sh > 0;
    const Shape& os = shape(n.outputs[0]);
    const ValueId xin = !x_blocked ? plain(x)
                        : flat_in  ? flat(x)
                        : sh > 0   ? subsampled_flat(x, sh, sw, os[2] * os[3])
                                   : blocked(x);
    const int64_t cop = padded(co), cg = depthwise ? 1 : x_blocked ? padded(ci) : ci;
    // W [Co, Cg, kh, kw] -> zero-padded to [Co', Cg', kh, kw] -> [Co'/B, Cg', kh, kw, B], or
    // over a blocked input [Co'/B, Cg'/B, kh, kw, B_in, B_out] (MLAS's OIhw16i16o order: the
    // weights one input block feeds into one output block lie contiguous, streamed once).
    const std::string base = g_.value(w).name;
    ValueId wp = pad_zeros(pad_zeros(plain(w), 0, cop, base + "/co"), 1, cg, base + "/ci");
    const bool w_blocked = x_blocked && !depthwise;
    const Shape wr_shape = w_blocked ? Shape{cop / B_, B_, cg / B_, B_, ws[2], ws[3]}
                                     : Shape{cop / B_, B_, cg, ws[2], ws[3]};
    const std::vector<int64_t> perm =
        w_blocked ? std::vector<int64_t>{0, 2, 4, 5, 3, 1} : std::vector<int64_t>{0, 2, 3, 4, 1};
    ValueId wr = out_.add(Op::Reshape, {wp}, {{"shape", wr_shape}}, base + "/nchwc_r");
    ValueId wb = out_.add(Op::Transpose, {wr}, {{"perm", perm}}, base + "/nchwc");
    std::vector<ValueId> ins = {xin, wb};
    if (b != kNoValue) {
      ValueId bp = pad_zeros(plain(b), 0, cop, g_.value(b).name + "/co");
      ins.push_back(out_.add(Op::Reshape, {bp}, {{"shape", Shape{cop / B_, B_}}},
                             g_.value(b).name + "/nchwc"));
    }
    Attrs a;
    for (const char* k : {"strides", "dilations", "pads", "group"})
      if (n.has(k)) a[k] = n.attrs.at(k);
    if (sh > 0) a["strides"] = std::vector<int64_t>{1, 1};  // the Slice took them
    if (depthwise) a["group"] = cop;
    emit(n, Op::ConvNchwc, ins, a, true, flat_conv);
    return true;
  }

  static bool is_pool(const Node& n) { return n.op == Op::MaxPool || n.op == Op::AveragePool; }

  bool try_pool(const Node& n) {
    ValueId x = n.inputs.at(0);
    if (!has_blocked(x) || shape(x).size() != 4) return false;
    Attrs a = n.attrs;
    auto widen = [&](const char* key, int64_t lane, bool pads) {
      if (!n.has(key)) return;
      std::vector<int64_t> v = n.ints(key);
      if (pads && v.size() == 4)
        v = {v[0], v[1], 0, v[2], v[3], 0};
      else if (!pads && v.size() == 2)
        v.push_back(lane);
      else
        return;
      a[key] = v;
    };
    widen("kernel_shape", 1, false);
    widen("strides", 1, false);
    widen("dilations", 1, false);
    widen("pads", 0, true);
    emit(n, n.op, {blocked(x)}, a, true);
    return true;
  }

  bool try_concat(const Node& n) {
    const Shape& os = shape(n.outputs[0]);
    if (os.size() != 4 || g_.value(n.outputs[0]).dtype != DType::F32 || n.i("axis", 0) != 1)
      return false;
    std::vector<ValueId> ins;
    for (ValueId in : n.inputs) {
      if (!has_blocked(in) || shape(in).size() != 4 || shape(in)[1] % B_ != 0) return false;
      ins.push_back(blocked(in));
    }
    emit(n, Op::Concat, ins, {{"axis", (int64_t)1}}, true);
    return true;
  }

  bool try_global_pool(const Node& n) {
    ValueId x = n.inputs.at(0), o = n.outputs[0];
    if (!has_blocked(x) || shape(x).size() != 4) return false;
    bool squeeze = !consumers_[o].empty();
    for (ValueId go : g_.outputs) squeeze = squeeze && go != o;
    for (int c : consumers_[o]) squeeze = squeeze && g_.nodes[c].op == Op::Conv;
    const Shape& xs = shape(x);
    if (squeeze)
      emit(n, Op::AveragePool, {blocked(x)},
           {{"kernel_shape", std::vector<int64_t>{xs[2], xs[3], 1}},
            {"strides", std::vector<int64_t>{1, 1, 1}},
            {"pads", std::vector<int64_t>(6, 0)},
            {"ceil_mode", (int64_t)0},
            {"count_include_pad", (int64_t)0}},
           true);
    else
      emit(n, n.op, {plain_[x] != kNoValue ? plain_[x] : plain_view(x)}, n.attrs, false);
    return true;
  }

  // Whether a value of shape s broadcasts per channel against the 4-D os: [N or 1, C, 1, 1] with
  // os spanning more than one pixel.
  static bool per_channel(const Shape& s, const Shape& os) {
    return s.size() == 4 && (s[0] == os[0] || s[0] == 1) && s[1] == os[1] && s[2] == 1 &&
           s[3] == 1 && os[2] * os[3] > 1;
  }

  // Ops that map zeros to zeros (and finite values to finite ones): the only ones allowed on
  // padded values, with blocked inputs only (x + 3 would fill the padding with 3s).
  static bool keeps_zeros(const Node& n) {
    switch (n.op) {
      case Op::Relu:
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::Max:
      case Op::Min:
      case Op::Neg:
      case Op::Abs:
      case Op::LeakyRelu:
      case Op::HardSwish:
        return true;
      case Op::Clip:
        return n.f("min", -std::numeric_limits<float>::infinity()) <= 0.f &&
               n.f("max", std::numeric_limits<float>::infinity()) >= 0.f;
      default:
        return false;
    }
  }

  bool try_elemwise(const Node& n) {
    const Shape& os = shape(n.outputs[0]);
    if (os.size() != 4 || g_.value(n.outputs[0]).dtype != DType::F32 || !paddable(os[1]))
      return false;
    const bool pads = os[1] % B_ != 0;
    if (pads && !keeps_zeros(n)) return false;
    bool any = false, flat_in = false;
    for (ValueId in : n.inputs)
      if (in != kNoValue && flat_[in] != kNoValue && blocked_[in] == kNoValue) flat_in = true;
    std::vector<ValueId> ins;
    for (ValueId in : n.inputs) {
      if (in == kNoValue) {
        ins.push_back(kNoValue);
        continue;
      }
      const Value& val = g_.value(in);
      if (val.is_constant() && numel(val.shape) == 1 && !pads) {
        ins.push_back(plain(in));  // broadcasts against any rank
      } else if (val.shape == os && has_blocked(in)) {
        // With a flattened input, all flattened (a blocked one viewed so); else all blocked.
        ins.push_back(flat_in ? flat(in) : blocked_[in]);
        any = true;
      } else if (per_channel(val.shape, os)) {
        ins.push_back(blocked(in));  // [., C'/B, 1, 1, B]: broadcasts against either form
      } else {
        return false;
      }
    }
    if (!any) return false;
    emit(n, n.op, ins, n.attrs, true, flat_in);
    return true;
  }

  const Graph& g_;
  const int64_t B_;
  const bool flat_ok_;
  const std::vector<std::vector<int>> consumers_;  // of the old graph, by ValueId
  Graph out_;
  // By old ValueId: the value in each layout (flat_: blocked with the pixels flattened), or none.
  std::vector<ValueId> plain_, blocked_, flat_;
};

}  // namespace

int layout_block(const std::string& layout, int lanes) {
  if (layout == "nchw") return 0;
  if (layout == "nchwc") return lanes;
  const std::string digits = layout.size() > 5 ? layout.substr(4, layout.size() - 5) : "";
  if (layout.rfind("nchw", 0) == 0 && layout.back() == 'c' && !digits.empty() &&
      digits.size() <= 2 && digits.find_first_not_of("0123456789") == std::string::npos) {
    const int b = std::stoi(digits);
    if (b >= 2) return b;
  }
  TLM_USER_ERROR() << "layout '" << layout
                   << "': expected nchw, nchwc, or nchw<B>c with B >= 2 (e.g. nchw16c)";
  return 0;
}

void block_channels(Graph& g, int block, bool flat_pixels) {
  TLM_CHECK(block >= 2) << "block_channels: block " << block;
  g = Blocker(g, block, flat_pixels).run();
}

}  // namespace tlm
