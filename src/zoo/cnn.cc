// Image classifiers, transcribed from torchvision 0.14 (torchvision/models/*.py) so that the
// graph equals torch.onnx.export's output after prepare_graph(): Conv+BN pairs (folded by torch
// at export, by fold_batchnorm here), heads as GlobalAveragePool/Flatten/Gemm, Dropout absent
// (inference), ReLU6 as Clip, residual Adds with torch's operand order.
// Parameters: batch, image (r3d_18 also frames), classes; mobilenet_v2 width (percent),
// vgg16 fc (classifier width), densenet121 growth.
#include <algorithm>
#include <cmath>

#include "zoo/families.h"

namespace tlm::zoo {
namespace {

int64_t channels(const ModelBuilder& b, ValueId x) { return shape_of(b, x).at(1); }

ValueId image_input(ModelBuilder& b, const ZooSpec& spec) {
  int64_t image = param(spec, "image");
  return b.g.add_input("input", DType::F32, {param(spec, "batch"), 3, image, image});
}

// avgpool(1) -> flatten -> classifier, the common torchvision head (Dropout vanishes).
ValueId pool_flatten(ModelBuilder& b, ValueId x) { return flatten(b, global_avg_pool(b, x)); }

// torchvision's _make_divisible: round to the nearest multiple of 8, never down by more than 10%.
int64_t make_divisible(double v, int64_t divisor = 8) {
  int64_t nv = std::max<int64_t>(divisor, (int64_t)(v + divisor / 2.0) / divisor * divisor);
  if ((double)nv < 0.9 * v) nv += divisor;
  return nv;
}

// ---------------------------------------------------------------- resnet (resnet.py)

ValueId basic_block(ModelBuilder& b, const std::string& name, ValueId x, int64_t planes,
                    int64_t stride) {
  ValueId y = conv_bn_act(b, name + ".1", x, planes, 3, stride, 1, 1, relu);
  y = conv_bn_act(b, name + ".2", y, planes, 3, 1, 1, 1, nullptr);
  ValueId identity = x;
  if (stride != 1 || channels(b, x) != planes)
    identity = conv_bn_act(b, name + ".downsample", x, planes, 1, stride, 0, 1, nullptr);
  return relu(b, binary(b, Op::Add, y, identity));
}

// ResNet v1.5: the stride sits on the 3x3 conv.
ValueId bottleneck(ModelBuilder& b, const std::string& name, ValueId x, int64_t planes,
                   int64_t stride) {
  ValueId y = conv_bn_act(b, name + ".1", x, planes, 1, 1, 0, 1, relu);
  y = conv_bn_act(b, name + ".2", y, planes, 3, stride, 1, 1, relu);
  y = conv_bn_act(b, name + ".3", y, planes * 4, 1, 1, 0, 1, nullptr);
  ValueId identity = x;
  if (stride != 1 || channels(b, x) != planes * 4)
    identity = conv_bn_act(b, name + ".downsample", x, planes * 4, 1, stride, 0, 1, nullptr);
  return relu(b, binary(b, Op::Add, y, identity));
}

}  // namespace

void build_resnet(ModelBuilder& b, const ZooSpec& spec) {
  bool deep = spec.name == "resnet50";
  const int64_t blocks[4] = {deep ? 3 : 2, deep ? 4 : 2, deep ? 6 : 2, deep ? 3 : 2};
  ValueId x = image_input(b, spec);
  x = conv_bn_act(b, "stem", x, 64, 7, 2, 3, 1, relu);
  x = max_pool(b, x, {3, 3}, {2, 2}, {1, 1});
  for (int stage = 0; stage < 4; stage++) {
    int64_t planes = 64 << stage;
    for (int64_t i = 0; i < blocks[stage]; i++) {
      std::string name = "layer" + std::to_string(stage + 1) + "." + std::to_string(i);
      int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      x = deep ? bottleneck(b, name, x, planes, stride) : basic_block(b, name, x, planes, stride);
    }
  }
  b.g.mark_output(linear(b, "fc", pool_flatten(b, x), param(spec, "classes")));
}

// ---------------------------------------------------------------- mobilenet_v2 (mobilenetv2.py)

void build_mobilenet_v2(ModelBuilder& b, const ZooSpec& spec) {
  double w = param(spec, "width") / 100.0;
  // t (expansion), c (channels), n (repeats), s (stride of the first repeat)
  const int64_t settings[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                  {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  ValueId x = image_input(b, spec);
  x = conv_bn_act(b, "features.0", x, make_divisible(32 * w), 3, 2, 1, 1, relu6);
  int block = 1;
  for (const auto& s : settings) {
    int64_t out = make_divisible(s[1] * w);
    for (int64_t i = 0; i < s[2]; i++, block++) {
      std::string name = "features." + std::to_string(block);
      int64_t in = channels(b, x), stride = i == 0 ? s[3] : 1, hidden = in * s[0];
      ValueId y = x;
      if (s[0] != 1) y = conv_bn_act(b, name + ".expand", y, hidden, 1, 1, 0, 1, relu6);
      y = conv_bn_act(b, name + ".dw", y, hidden, 3, stride, 1, hidden, relu6);
      y = conv_bn_act(b, name + ".project", y, out, 1, 1, 0, 1, nullptr);
      x = (stride == 1 && in == out) ? binary(b, Op::Add, x, y) : y;
    }
  }
  int64_t last = make_divisible(1280 * std::max(1.0, w));
  x = conv_bn_act(b, "features.18", x, last, 1, 1, 0, 1, relu6);
  b.g.mark_output(linear(b, "classifier", pool_flatten(b, x), param(spec, "classes")));
}

// ---------------------------------------------------------------- mobilenet_v3 (mobilenetv3.py)

namespace {

struct Bneck {
  int64_t kernel, expanded, out;
  bool se, hardswish;
  int64_t stride;
};

// torchvision.ops.SqueezeExcitation: scale = hardsigmoid(fc2(relu(fc1(avgpool(x))))); scale * x.
ValueId squeeze_excite(ModelBuilder& b, const std::string& name, ValueId x) {
  int64_t c = channels(b, x), squeeze = make_divisible((double)(c / 4));
  ValueId s = global_avg_pool(b, x);
  s = relu(b, conv2d(b, name + ".fc1", s, squeeze, 1, 1, 0, 1, true));
  s = hardsigmoid(b, conv2d(b, name + ".fc2", s, c, 1, 1, 0, 1, true));
  return binary(b, Op::Mul, s, x);
}

}  // namespace

void build_mobilenet_v3(ModelBuilder& b, const ZooSpec& spec) {
  static const std::vector<Bneck> kLarge = {
      {3, 16, 16, false, false, 1}, {3, 64, 24, false, false, 2}, {3, 72, 24, false, false, 1},
      {5, 72, 40, true, false, 2},  {5, 120, 40, true, false, 1}, {5, 120, 40, true, false, 1},
      {3, 240, 80, false, true, 2}, {3, 200, 80, false, true, 1}, {3, 184, 80, false, true, 1},
      {3, 184, 80, false, true, 1}, {3, 480, 112, true, true, 1}, {3, 672, 112, true, true, 1},
      {5, 672, 160, true, true, 2}, {5, 960, 160, true, true, 1}, {5, 960, 160, true, true, 1}};
  static const std::vector<Bneck> kSmall = {
      {3, 16, 16, true, false, 2}, {3, 72, 24, false, false, 2}, {3, 88, 24, false, false, 1},
      {5, 96, 40, true, true, 2},  {5, 240, 40, true, true, 1},  {5, 240, 40, true, true, 1},
      {5, 120, 48, true, true, 1}, {5, 144, 48, true, true, 1},  {5, 288, 96, true, true, 2},
      {5, 576, 96, true, true, 1}, {5, 576, 96, true, true, 1}};
  bool large = spec.name == "mobilenet_v3_large";
  const std::vector<Bneck>& conf = large ? kLarge : kSmall;
  const float eps = 0.001f;

  ValueId x = image_input(b, spec);
  x = conv_bn_act(b, "features.0", x, 16, 3, 2, 1, 1, hardswish, eps);
  for (size_t i = 0; i < conf.size(); i++) {
    const Bneck& c = conf[i];
    std::string name = "features." + std::to_string(i + 1);
    Activation act = c.hardswish ? hardswish : relu;
    int64_t in = channels(b, x);
    ValueId y = x;
    if (c.expanded != in) y = conv_bn_act(b, name + ".expand", y, c.expanded, 1, 1, 0, 1, act, eps);
    y = conv_bn_act(b, name + ".dw", y, c.expanded, c.kernel, c.stride, (c.kernel - 1) / 2,
                    c.expanded, act, eps);
    if (c.se) y = squeeze_excite(b, name + ".se", y);
    y = conv_bn_act(b, name + ".project", y, c.out, 1, 1, 0, 1, nullptr, eps);
    x = (c.stride == 1 && in == c.out) ? binary(b, Op::Add, y, x) : y;
  }
  x = conv_bn_act(b, "features.last", x, 6 * channels(b, x), 1, 1, 0, 1, hardswish, eps);
  x = hardswish(b, linear(b, "classifier.0", pool_flatten(b, x), large ? 1280 : 1024));
  b.g.mark_output(linear(b, "classifier.3", x, param(spec, "classes")));
}

// ---------------------------------------------------------------- vgg16 (vgg.py, config "D")

void build_vgg16(ModelBuilder& b, const ZooSpec& spec) {
  const int64_t kPool = 0;
  const int64_t cfg[] = {64,    64,  kPool, 128, 128,   kPool, 256, 256, 256,
                         kPool, 512, 512,   512, kPool, 512,   512, 512, kPool};
  ValueId x = image_input(b, spec);
  int conv_i = 0;
  for (int64_t c : cfg) {
    if (c == kPool) {
      x = max_pool(b, x, {2, 2}, {2, 2}, {0, 0});
    } else {
      x = relu(b, conv2d(b, "features.conv" + std::to_string(conv_i++), x, c, 3, 1, 1, 1, true));
    }
  }
  // AdaptiveAvgPool2d((7,7)): torch exports it only when 7 divides the feature map, as an
  // AveragePool with kernel = stride = size / 7.
  int64_t f = shape_of(b, x).at(2);
  if (f % 7 != 0)
    TLM_USER_ERROR() << "vgg16: image=" << param(spec, "image") << " leaves a " << f << "x" << f
                     << " feature map; AdaptiveAvgPool2d(7) needs a multiple of 7 "
                        "(image = 224, 448, ...)";
  x = avg_pool(b, x, {f / 7, f / 7}, {f / 7, f / 7});
  x = flatten(b, x);
  int64_t fc = param(spec, "fc");
  x = relu(b, linear(b, "classifier.0", x, fc));
  x = relu(b, linear(b, "classifier.3", x, fc));
  b.g.mark_output(linear(b, "classifier.6", x, param(spec, "classes")));
}

// ---------------------------------------------------------------- densenet121 (densenet.py)

void build_densenet121(ModelBuilder& b, const ZooSpec& spec) {
  const int64_t kBlocks[4] = {6, 12, 24, 16};
  const int64_t growth = param(spec, "growth"), bn_size = 4;
  ValueId x = image_input(b, spec);
  x = conv_bn_act(b, "features.0", x, 64, 7, 2, 3, 1, relu);
  x = max_pool(b, x, {3, 3}, {2, 2}, {1, 1});
  for (int blk = 0; blk < 4; blk++) {
    std::string bname = "denseblock" + std::to_string(blk + 1);
    std::vector<ValueId> features = {x};
    for (int64_t l = 0; l < kBlocks[blk]; l++) {
      std::string name = bname + ".layer" + std::to_string(l + 1);
      // _DenseLayer: cat(inputs) -> norm1 -> relu1 -> conv1 (1x1) -> norm2 -> relu2 -> conv2.
      ValueId y = concat(b, features, 1);
      y = relu(b, batch_norm(b, name + ".norm1", y));
      y = conv_bn_act(b, name + ".conv1", y, bn_size * growth, 1, 1, 0, 1, relu);
      features.push_back(conv2d(b, name + ".conv2", y, growth, 3, 1, 1));
    }
    x = concat(b, features, 1);
    if (blk < 3) {
      std::string tname = "transition" + std::to_string(blk + 1);
      x = relu(b, batch_norm(b, tname + ".norm", x));
      x = conv2d(b, tname + ".conv", x, channels(b, x) / 2, 1, 1, 0);
      x = avg_pool(b, x, {2, 2}, {2, 2});
    }
  }
  x = relu(b, batch_norm(b, "features.norm5", x));
  b.g.mark_output(linear(b, "classifier", pool_flatten(b, x), param(spec, "classes")));
}

// ---------------------------------------------------------------- googlenet (googlenet.py)

namespace {

// BasicConv2d: conv (no bias) -> BatchNorm(eps 0.001) -> ReLU.
ValueId basic_conv(ModelBuilder& b, const std::string& name, ValueId x, int64_t cout, int64_t k,
                   int64_t stride = 1, int64_t pad = 0) {
  return conv_bn_act(b, name, x, cout, k, stride, pad, 1, relu, 0.001f);
}

ValueId inception(ModelBuilder& b, const std::string& name, ValueId x, int64_t ch1x1,
                  int64_t ch3x3red, int64_t ch3x3, int64_t ch5x5red, int64_t ch5x5,
                  int64_t pool_proj) {
  ValueId b1 = basic_conv(b, name + ".branch1", x, ch1x1, 1);
  ValueId b2 = basic_conv(b, name + ".branch2.0", x, ch3x3red, 1);
  b2 = basic_conv(b, name + ".branch2.1", b2, ch3x3, 3, 1, 1);
  // torchvision's "5x5" branch really uses a 3x3 kernel (a known quirk kept for weight compat).
  ValueId b3 = basic_conv(b, name + ".branch3.0", x, ch5x5red, 1);
  b3 = basic_conv(b, name + ".branch3.1", b3, ch5x5, 3, 1, 1);
  ValueId b4 = max_pool(b, x, {3, 3}, {1, 1}, {1, 1}, true);
  b4 = basic_conv(b, name + ".branch4.1", b4, pool_proj, 1);
  return concat(b, {b1, b2, b3, b4}, 1);
}

}  // namespace

void build_googlenet(ModelBuilder& b, const ZooSpec& spec) {
  ValueId x = image_input(b, spec);
  x = basic_conv(b, "conv1", x, 64, 7, 2, 3);
  x = max_pool(b, x, {3, 3}, {2, 2}, {0, 0}, true);
  x = basic_conv(b, "conv2", x, 64, 1);
  x = basic_conv(b, "conv3", x, 192, 3, 1, 1);
  x = max_pool(b, x, {3, 3}, {2, 2}, {0, 0}, true);
  x = inception(b, "inception3a", x, 64, 96, 128, 16, 32, 32);
  x = inception(b, "inception3b", x, 128, 128, 192, 32, 96, 64);
  x = max_pool(b, x, {3, 3}, {2, 2}, {0, 0}, true);
  x = inception(b, "inception4a", x, 192, 96, 208, 16, 48, 64);
  x = inception(b, "inception4b", x, 160, 112, 224, 24, 64, 64);
  x = inception(b, "inception4c", x, 128, 128, 256, 24, 64, 64);
  x = inception(b, "inception4d", x, 112, 144, 288, 32, 64, 64);
  x = inception(b, "inception4e", x, 256, 160, 320, 32, 128, 128);
  x = max_pool(b, x, {2, 2}, {2, 2}, {0, 0}, true);
  x = inception(b, "inception5a", x, 256, 160, 320, 32, 128, 128);
  x = inception(b, "inception5b", x, 384, 192, 384, 48, 128, 128);
  b.g.mark_output(linear(b, "fc", pool_flatten(b, x), param(spec, "classes")));
}

// ---------------------------------------------------------------- r3d_18 (video/resnet.py)

namespace {

// Conv3d (no bias) -> BatchNorm3d, with an optional ReLU.
ValueId conv3d_bn(ModelBuilder& b, const std::string& name, ValueId x, int64_t cout,
                  const std::vector<int64_t>& k, const std::vector<int64_t>& stride,
                  const std::vector<int64_t>& pad, bool with_relu) {
  ValueId y =
      batch_norm(b, name + ".bn", conv(b, name + ".conv", x, cout, k, stride, pad, 1, false));
  return with_relu ? relu(b, y) : y;
}

}  // namespace

void build_r3d_18(ModelBuilder& b, const ZooSpec& spec) {
  int64_t image = param(spec, "image");
  ValueId x = b.g.add_input("input", DType::F32,
                            {param(spec, "batch"), 3, param(spec, "frames"), image, image});
  x = conv3d_bn(b, "stem", x, 64, {3, 7, 7}, {1, 2, 2}, {1, 3, 3}, true);
  for (int stage = 0; stage < 4; stage++) {
    int64_t planes = 64 << stage;
    for (int i = 0; i < 2; i++) {
      std::string name = "layer" + std::to_string(stage + 1) + "." + std::to_string(i);
      int64_t s = (stage > 0 && i == 0) ? 2 : 1;
      ValueId y = conv3d_bn(b, name + ".conv1", x, planes, {3, 3, 3}, {s, s, s}, {1, 1, 1}, true);
      y = conv3d_bn(b, name + ".conv2", y, planes, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, false);
      ValueId identity = x;
      if (s != 1 || channels(b, x) != planes)
        identity =
            conv3d_bn(b, name + ".downsample", x, planes, {1, 1, 1}, {s, s, s}, {0, 0, 0}, false);
      x = relu(b, binary(b, Op::Add, y, identity));
    }
  }
  b.g.mark_output(linear(b, "fc", pool_flatten(b, x), param(spec, "classes")));
}

}  // namespace tlm::zoo
