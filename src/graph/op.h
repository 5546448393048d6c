// The operator table: every operator the graph IR knows, one row each, with its fusion pattern
// (TVM's OpPatternKind, simplified). Every per-operator table elsewhere (shape inference, the
// reference interpreter, Halide lowering, FLOP counting) is indexed by Op and static_asserts
// kOpCount, so adding a row here without the others is a build error (STYLE.md habit 2).
//
// The IR is the *canonical* form produced by the importer and the zoo builders: attributes that
// ONNX passes as constant inputs in later opsets (Reshape shape, Slice starts, Squeeze axes, Clip
// bounds, Split sizes, ReduceX axes, Expand shape) are attributes here. ONNX operators with no
// row (Split, Shape, Constant, ConstantOfShape, Identity, Dropout) are resolved by the importer:
// Split becomes Slices, the others become constants or aliases. docs/ir.md lists every attribute.
#pragma once

#include <cstdint>
#include <string>

namespace tlm {

// How an operator fuses (partition/): anchors and reductions take an elementwise epilogue and
// an injective prologue; elementwise/injective ops otherwise join each other.
enum class OpPattern : uint8_t { Elemwise, Injective, Reduce, Anchor };

// X(name, pattern).
#define TLM_OP_LIST(X)                  \
  /* anchors: compute-intensive */      \
  X(Conv, Anchor)                       \
  X(ConvTranspose, Anchor)              \
  X(ConvNchwc, Anchor)                  \
  X(Gemm, Anchor)                       \
  X(MatMul, Anchor)                     \
  X(MaxPool, Anchor)                    \
  X(AveragePool, Anchor)                \
  X(GlobalAveragePool, Anchor)          \
  /* reductions */                      \
  X(ReduceMean, Reduce)                 \
  X(ReduceSum, Reduce)                  \
  X(Softmax, Reduce)                    \
  X(LayerNormalization, Reduce)         \
  /* elementwise, with broadcasting */  \
  X(Add, Elemwise)                      \
  X(Sub, Elemwise)                      \
  X(Mul, Elemwise)                      \
  X(Div, Elemwise)                      \
  X(Pow, Elemwise)                      \
  X(Max, Elemwise)                      \
  X(Min, Elemwise)                      \
  X(Equal, Elemwise)                    \
  X(Less, Elemwise)                     \
  X(Greater, Elemwise)                  \
  X(Where, Elemwise)                    \
  X(Sqrt, Elemwise)                     \
  X(Erf, Elemwise)                      \
  X(Exp, Elemwise)                      \
  X(Log, Elemwise)                      \
  X(Tanh, Elemwise)                     \
  X(Sigmoid, Elemwise)                  \
  X(Relu, Elemwise)                     \
  X(Neg, Elemwise)                      \
  X(Abs, Elemwise)                      \
  X(Reciprocal, Elemwise)               \
  X(Clip, Elemwise)                     \
  X(HardSigmoid, Elemwise)              \
  X(HardSwish, Elemwise)                \
  X(LeakyRelu, Elemwise)                \
  X(Cast, Elemwise)                     \
  X(BatchNormalization, Elemwise)       \
  /* injective: data movement */        \
  X(Reshape, Injective)                 \
  X(Flatten, Injective)                 \
  X(Transpose, Injective)               \
  X(Squeeze, Injective)                 \
  X(Unsqueeze, Injective)               \
  X(Concat, Injective)                  \
  X(Slice, Injective)                   \
  X(Gather, Injective)                  \
  X(Expand, Injective)

enum class Op : uint16_t {
#define TLM_OP_ENUM(name, pattern) name,
  TLM_OP_LIST(TLM_OP_ENUM)
#undef TLM_OP_ENUM
};

#define TLM_OP_COUNT_ONE(name, pattern) +1
constexpr int kOpCount = 0 TLM_OP_LIST(TLM_OP_COUNT_ONE);
#undef TLM_OP_COUNT_ONE

const char* op_name(Op op);           // "Conv"
OpPattern op_pattern(Op op);
const char* pattern_name(OpPattern p);  // "anchor", "elemwise", ...
// Looks an ONNX op_type up; false if it is not in the table.
bool op_from_name(const std::string& name, Op* out);

}  // namespace tlm
