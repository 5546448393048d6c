// Hostile-input robustness: random nodes of every op -- wrong input counts and dtypes, random
// small shapes, attributes of random type, length and value (including extreme ones) -- go
// through Graph::add (shape inference, then folding when the inputs are constant) and, when
// accepted with runtime inputs, through interpret(). The only acceptable failure is a
// UserError; anything else (InternalError, std::exception, a crash) fails the test.
// Trials start from a valid node per op, so evaluation paths are really exercised.
#include <gtest/gtest.h>

#include <climits>
#include <random>
#include <string>

#include "graph/graph.h"
#include "graph/interpreter.h"

namespace tlm {
namespace {

// A valid node of each op (the seed), which trials mutate: input shapes, dtypes and counts,
// attribute values, lengths and types.
struct Input {
  Shape shape;
  DType dtype = DType::F32;
};
struct OpSeed {
  Op op;
  std::vector<Input> inputs;
  Attrs attrs;
};

using I = std::vector<int64_t>;
const DType kI64 = DType::I64;

const std::vector<OpSeed>& seeds() {
  static const std::vector<OpSeed> all = [] {
    std::vector<OpSeed> s = {
        {Op::Conv,
         {{{1, 4, 5, 5}}, {{6, 2, 3, 3}}, {{6}}},
         {{"strides", I{1, 2}},
          {"dilations", I{1, 1}},
          {"pads", I{1, 1, 0, 1}},
          {"group", int64_t(2)}}},
        {Op::ConvTranspose,
         {{{1, 4, 3, 3}}, {{4, 3, 2, 2}}, {{6}}},
         {{"strides", I{2, 1}},
          {"dilations", I{1, 1}},
          {"pads", I{0, 1, 0, 0}},
          {"output_padding", I{1, 0}},
          {"group", int64_t(2)}}},
        {Op::ConvNchwc,  // blocked input [1, 2, 5, 5, 4], W [Co/4 = 3, Ci/4 = 2, 3, 3, 4, 4]
         {{{1, 2, 5, 5, 4}}, {{3, 2, 3, 3, 4, 4}}, {{3, 4}}},
         {{"strides", I{1, 2}}, {"dilations", I{1, 1}}, {"pads", I{1, 1, 0, 1}}, {"group", int64_t(1)}}},
        {Op::Gemm,
         {{{3, 4}}, {{5, 4}}, {{5}}},
         {{"alpha", 1.f}, {"beta", 1.f}, {"transA", int64_t(0)}, {"transB", int64_t(1)}}},
        {Op::MatMul, {{{2, 3, 4}}, {{4, 5}}}, {}},
        {Op::MaxPool,
         {{{1, 2, 5, 5}}},
         {{"kernel_shape", I{2, 2}},
          {"strides", I{2, 2}},
          {"pads", I{0, 0, 1, 1}},
          {"dilations", I{1, 1}},
          {"ceil_mode", int64_t(1)}}},
        {Op::AveragePool,
         {{{1, 2, 5, 5}}},
         {{"kernel_shape", I{2, 2}},
          {"strides", I{2, 2}},
          {"pads", I{0, 0, 1, 1}},
          {"ceil_mode", int64_t(1)},
          {"count_include_pad", int64_t(1)}}},
        {Op::GlobalAveragePool, {{{1, 2, 3, 3}}}, {}},
        {Op::ReduceMean, {{{2, 3, 4}}}, {{"axes", I{1}}, {"keepdims", int64_t(1)}}},
        {Op::ReduceSum, {{{2, 3, 4}}}, {{"axes", I{0, 2}}, {"keepdims", int64_t(0)}}},
        {Op::Softmax, {{{2, 3}}}, {{"axis", int64_t(1)}}},
        {Op::LayerNormalization,
         {{{2, 3, 4}}, {{4}}, {{4}}},
         {{"axis", int64_t(2)}, {"epsilon", 1e-5f}}},
        {Op::Where, {{{2, 1}, DType::Bool}, {{2, 3}}, {{3}}}, {}},
        {Op::Clip, {{{2, 3}}}, {{"min", -1.f}, {"max", 1.f}}},
        {Op::HardSigmoid, {{{2, 3}}}, {{"alpha", 0.2f}, {"beta", 0.5f}}},
        {Op::LeakyRelu, {{{2, 3}}}, {{"alpha", 0.1f}}},
        {Op::Cast, {{{2, 3}}}, {{"to", int64_t(1)}}},
        {Op::BatchNormalization,
         {{{1, 3, 2, 2}}, {{3}}, {{3}}, {{3}}, {{3}}},
         {{"epsilon", 1e-5f}}},
        {Op::Reshape, {{{2, 3}}}, {{"shape", I{3, 2}}}},
        {Op::Flatten, {{{2, 3, 4}}}, {{"axis", int64_t(1)}}},
        {Op::Transpose, {{{2, 3, 4}}}, {{"perm", I{2, 0, 1}}}},
        {Op::Squeeze, {{{2, 1, 3}}}, {{"axes", I{1}}}},
        {Op::Unsqueeze, {{{2, 3}}}, {{"axes", I{0, 2}}}},
        {Op::Concat, {{{2, 3}}, {{2, 2}}}, {{"axis", int64_t(1)}}},
        {Op::Slice, {{{4, 5}}}, {{"starts", I{1, -1}}, {"ends", I{3, -6}}, {"steps", I{1, -2}}}},
        {Op::Gather, {{{4, 3}}, {{2}, kI64}}, {{"axis", int64_t(0)}}},
        {Op::Expand, {{{3, 1}}}, {{"shape", I{2, 3, 4}}}},
    };
    // The remaining ops take no attributes: binary ones [2,3] (op) [3], unary ones [2,3].
    for (int k = 0; k < kOpCount; k++) {
      bool listed = false;
      for (const OpSeed& o : s) listed = listed || (int)o.op == k;
      if (listed) continue;
      const bool binary = (Op)k >= Op::Add && (Op)k <= Op::Greater;
      s.push_back(
          {(Op)k, binary ? std::vector<Input>{{{2, 3}}, {{3}}} : std::vector<Input>{{{2, 3}}}, {}});
    }
    return s;
  }();
  return all;
}

class Fuzzer {
 public:
  explicit Fuzzer(uint64_t seed) : rng_(seed) {}

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  int64_t int_value() {
    if (chance(0.8)) return pick(-2, 4);
    const int64_t extremes[] = {INT64_MIN,           INT64_MAX,        int64_t(1) << 40,
                                -(int64_t(1) << 40), int64_t(1) << 62, 1000};
    return extremes[pick(0, 5)];
  }

  void mutate_shape(Shape& s) {
    const int what = pick(0, 3);
    if (what == 0 && !s.empty()) s.erase(s.begin() + pick(0, (int)s.size() - 1));
    if (what == 1) s.insert(s.begin() + pick(0, (int)s.size()), pick(1, 3));
    if (what >= 2 && !s.empty()) s[pick(0, (int)s.size() - 1)] = chance(0.2) ? 0 : pick(1, 5);
  }

  void mutate_attr(AttrValue& v) {
    if (chance(0.05)) {
      v = std::string("bogus");
      return;
    }
    if (auto* i = std::get_if<int64_t>(&v)) {
      if (chance(0.1))
        v = 1.5f;
      else
        *i = int_value();
    } else if (auto* f = std::get_if<float>(&v)) {
      if (chance(0.1))
        v = int64_t(1);
      else
        *f = (float)pick(-4, 4) * 0.5f;
    } else if (auto* l = std::get_if<std::vector<int64_t>>(&v)) {
      const int what = pick(0, 2);
      if (what == 0 && !l->empty()) l->pop_back();
      if (what == 1) l->push_back(int_value());
      if (what == 2 && !l->empty()) (*l)[pick(0, (int)l->size() - 1)] = int_value();
    }
  }

  Tensor tensor(DType t, const Shape& s) {
    return random_tensor(t, s, rng_(), t == DType::I64 ? -4 : -3, t == DType::I64 ? 5 : 3);
  }

 private:
  std::mt19937_64 rng_;
};

TEST(Fuzz, MutatedNodesRaiseOnlyUserErrors) {
  Fuzzer fz(12345);
  for (const OpSeed& seed : seeds()) {
    int accepted = 0, rejected = 0;
    for (int trial = 0; trial < 400; trial++) {
      // Mutation strength: a quarter of the trials are the valid seed itself.
      const double p = trial % 4 == 0 ? 0.0 : 0.25;
      std::vector<Input> inputs = seed.inputs;
      for (Input& in : inputs) {
        if (fz.chance(p)) fz.mutate_shape(in.shape);
        if (fz.chance(p / 4)) in.dtype = (DType)fz.pick(0, 2);
      }
      if (fz.chance(p / 4)) inputs.pop_back();
      if (fz.chance(p / 4)) inputs.push_back(inputs.empty() ? Input{{2}} : inputs.back());
      Attrs attrs = seed.attrs;
      for (auto it = attrs.begin(); it != attrs.end();) {
        if (fz.chance(p / 8)) {
          it = attrs.erase(it);
          continue;
        }
        if (fz.chance(p)) fz.mutate_attr(it->second);
        ++it;
      }
      Graph g;
      std::vector<ValueId> ins;
      std::vector<Tensor> runtime;
      for (size_t k = 0; k < inputs.size(); k++) {
        if (k > 0 && fz.chance(p / 4)) {  // an absent (optional?) input
          ins.push_back(kNoValue);
          continue;
        }
        Tensor v = fz.tensor(inputs[k].dtype, inputs[k].shape);
        if (fz.chance(0.5)) {
          ins.push_back(g.add_constant("c" + std::to_string(k), std::move(v)));
        } else {
          ins.push_back(g.add_input("x" + std::to_string(k), inputs[k].dtype, inputs[k].shape));
          runtime.push_back(std::move(v));
        }
      }
      try {
        g.mark_output(g.add(seed.op, ins, attrs, "fz"));
        std::vector<Tensor> out = interpret(g, runtime);
        EXPECT_EQ(out.at(0).shape(), g.value(g.outputs[0]).shape);
        accepted++;
      } catch (const UserError& e) {
        rejected++;
        EXPECT_NE(std::string(e.what()).find("'fz'"), std::string::npos)
            << op_name(seed.op) << ": " << e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << op_name(seed.op) << " trial " << trial << ": " << e.what();
      }
    }
    // The unmutated seeds alone are 100 accepted trials; mutations must also be rejected.
    EXPECT_GE(accepted, 100) << op_name(seed.op);
    EXPECT_GT(rejected, 0) << op_name(seed.op) << ": no mutation was ever rejected";
  }
}

}  // namespace
}  // namespace tlm
