// Layer helpers for the zoo builders: each appends the nodes PyTorch's ONNX exporter would emit
// for one torch module (nn.Conv2d -> Conv, nn.Linear -> Gemm or MatMul+Add, ReLU6 -> Clip, ...),
// so the families in cnn.cc / transformer.cc / other.cc read like the torchvision sources.
//
//   ModelBuilder   the graph under construction and the weight seed stream: the i-th tensor drawn
//                  gets a seed derived from (model seed, i), so a model is a pure function of
//                  its spec and seed
//   weight()       uniform(-bound, bound) constants; layers use bound = 1/sqrt(fan_in) (torch's
//                  default init), which keeps activations finite through deep nets
//   batch_norm()   a real BatchNormalization node with random positive variance; prepare_graph()
//                  folds it into the preceding conv the way torch.onnx.export does
// Helpers that own weights take a `name`: the node name prefix and weight names, for debugging.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "zoo/zoo.h"

namespace tlm::zoo {

struct ModelBuilder {
  Graph g;
  uint64_t seed = 0;
  uint64_t drawn = 0;        // tensors drawn so far
  int64_t weight_bytes = 0;  // their total size, checked against kMaxWeightBytes
};

// Larger parameter choices are UserErrors rather than an allocation failure halfway through.
constexpr int64_t kMaxWeightBytes = int64_t{8} << 30;

// A copy: adding nodes grows g.values, so references into it do not survive a call.
Shape shape_of(const ModelBuilder& b, ValueId v);

// --- constants ---
// Random f32 constants; a UserError once the model's weights would pass kMaxWeightBytes.
ValueId weight(ModelBuilder& b, const std::string& name, const Shape& shape, double bound);
ValueId uniform(ModelBuilder& b, const std::string& name, const Shape& shape, double lo, double hi);
ValueId scalar(ModelBuilder& b, float v);
ValueId constant(ModelBuilder& b, const std::string& name, Tensor t);

// --- generic nodes ---
ValueId node(ModelBuilder& b, Op op, std::vector<ValueId> inputs, Attrs attrs = {},
             const std::string& name = "");
ValueId unary(ModelBuilder& b, Op op, ValueId x);
ValueId binary(ModelBuilder& b, Op op, ValueId x, ValueId y);

// --- convolution family ---
// N-d convolution (rank of x minus 2 spatial dims); `pad` is symmetric per spatial dim.
ValueId conv(ModelBuilder& b, const std::string& name, ValueId x, int64_t cout,
             const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
             const std::vector<int64_t>& pad, int64_t group, bool bias);
// Square 2-D convolution, the common case.
ValueId conv2d(ModelBuilder& b, const std::string& name, ValueId x, int64_t cout, int64_t k,
               int64_t stride, int64_t pad, int64_t group = 1, bool bias = false);
// 2-D transposed convolution (W is [Cin, Cout, k, k]), no output padding.
ValueId conv_transpose2d(ModelBuilder& b, const std::string& name, ValueId x, int64_t cout,
                         int64_t k, int64_t stride, int64_t pad, bool bias);
ValueId batch_norm(ModelBuilder& b, const std::string& name, ValueId x, float eps = 1e-5f);

// Activations as torch exports them at opset 17.
ValueId relu(ModelBuilder& b, ValueId x);
ValueId relu6(ModelBuilder& b, ValueId x);        // Clip(0, 6)
ValueId hardswish(ModelBuilder& b, ValueId x);    // HardSwish
ValueId hardsigmoid(ModelBuilder& b, ValueId x);  // HardSigmoid(alpha=1/6, beta=0.5)
ValueId silu(ModelBuilder& b, ValueId x);         // Mul(x, Sigmoid(x))
ValueId gelu_erf(ModelBuilder& b, ValueId x);     // x * (erf(x/sqrt2) + 1) * 0.5
ValueId gelu_tanh(ModelBuilder& b, ValueId x);    // GPT-2's gelu_new

// conv -> BatchNormalization -> activation (nullptr: none), the torchvision building block.
using Activation = ValueId (*)(ModelBuilder&, ValueId);
ValueId conv_bn_act(ModelBuilder& b, const std::string& name, ValueId x, int64_t cout, int64_t k,
                    int64_t stride, int64_t pad, int64_t group, Activation act, float eps = 1e-5f);

// --- pooling and heads ---
ValueId max_pool(ModelBuilder& b, ValueId x, const std::vector<int64_t>& kernel,
                 const std::vector<int64_t>& stride, const std::vector<int64_t>& pad,
                 bool ceil_mode = false);
ValueId avg_pool(ModelBuilder& b, ValueId x, const std::vector<int64_t>& kernel,
                 const std::vector<int64_t>& stride);
ValueId global_avg_pool(ModelBuilder& b, ValueId x);
ValueId flatten(ModelBuilder& b, ValueId x, int64_t axis = 1);
// nn.Linear: Gemm(transB=1, W [out,in]) on a 2-D input, MatMul(W [in,out]) + Add(bias) otherwise
// (that is how torch exports it).
ValueId linear(ModelBuilder& b, const std::string& name, ValueId x, int64_t out, bool bias = true);

// --- data movement ---
ValueId reshape(ModelBuilder& b, ValueId x, const Shape& shape);
ValueId transpose(ModelBuilder& b, ValueId x, const std::vector<int64_t>& perm);
ValueId concat(ModelBuilder& b, const std::vector<ValueId>& xs, int64_t axis);
// x[..., start:end, ...] along one axis.
ValueId slice_axis(ModelBuilder& b, ValueId x, int64_t axis, int64_t start, int64_t end);

// --- normalization ---
// LayerNormalization over the last axis, random scale near 1 and small bias.
ValueId layer_norm(ModelBuilder& b, const std::string& name, ValueId x, float eps);
// LLaMA's RMSNorm: x / sqrt(mean(x^2) + eps) * weight, as Pow/ReduceMean/Add/Sqrt/Div/Mul.
ValueId rms_norm(ModelBuilder& b, const std::string& name, ValueId x, float eps);

// --- parameters ---
// The value of parameter `key` of a parsed spec (an internal error if the table lacks it).
int64_t param(const ZooSpec& spec, const std::string& key);

}  // namespace tlm::zoo
