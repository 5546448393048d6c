// The zoo as a whole: every model builds at a small configuration, shape parameters reach the
// shapes, default FLOPs match published numbers, small models interpret to finite values, and
// spec errors are UserErrors that say what is valid.
#include "zoo/zoo.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "graph/interpreter.h"
#include "graph/passes.h"
#include "partition/partition.h"

namespace tlm {
namespace {

// A small configuration of each model, cheap to build and to interpret.
const std::map<std::string, std::string> kSmall = {
    {"resnet18", "resnet18:image=32,classes=10"},
    {"resnet50", "resnet50:image=32,classes=10"},
    {"mobilenet_v2", "mobilenet_v2:image=32,classes=10,width=50"},
    {"mobilenet_v3_small", "mobilenet_v3_small:image=32,classes=10"},
    {"mobilenet_v3_large", "mobilenet_v3_large:image=32,classes=10"},
    {"vgg16", "vgg16:image=224,fc=16,classes=10"},
    {"densenet121", "densenet121:image=32,classes=10,growth=8"},
    {"googlenet", "googlenet:image=32,classes=10"},
    {"r3d_18", "r3d_18:frames=4,image=16,classes=10"},
    {"bert-tiny", "bert-tiny:seq=8,vocab=100"},
    {"bert-base", "bert-base:seq=8,layers=1,vocab=100"},
    {"bert-large", "bert-large:seq=8,layers=1,vocab=100"},
    {"gpt2", "gpt2:seq=8,layers=2,hidden=64,heads=4,ff=256,vocab=100"},
    {"llama_layer", "llama_layer:seq=8,hidden=64,heads=4,ff=172"},
    {"dcgan", "dcgan:nz=16,ngf=8,image=32"},
};

const Value& output_of(const Graph& g) { return g.value(g.outputs.at(0)); }

double total_flops(Graph g) {
  prepare_graph(g);
  double f = 0;
  for (const Node& n : g.nodes) f += node_flops(g, n);
  return f;
}

// Input tensors in the graph's order: token ids in range, images uniform in [-1, 1).
std::vector<Tensor> random_inputs(const Graph& g) {
  std::vector<Tensor> ins;
  for (ValueId id : g.inputs) {
    const Value& v = g.value(id);
    ins.push_back(v.dtype == DType::I64 ? random_tensor(DType::I64, v.shape, 7, 0, 100)
                                        : random_tensor(DType::F32, v.shape, 7));
  }
  return ins;
}

std::string user_error_of(const std::string& spec) {
  try {
    build_zoo_model(spec);
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no UserError>";
}

TEST(Zoo, EveryModelHasASmallConfigurationThatBuilds) {
  std::set<std::string> names;
  for (const ZooInfo& info : zoo_models()) {
    names.insert(info.name);
    ASSERT_TRUE(kSmall.count(info.name)) << info.name << " lacks a small test configuration";
    SCOPED_TRACE(kSmall.at(info.name));
    Graph g = build_zoo_model(kSmall.at(info.name));
    ASSERT_EQ(g.outputs.size(), 1u);
    EXPECT_FALSE(g.nodes.empty());
    EXPECT_FALSE(output_of(g).is_constant());
    prepare_graph(g);
    EXPECT_FALSE(g.nodes.empty());
  }
  EXPECT_EQ(names.size(), kSmall.size());
}

TEST(Zoo, InputNamesAndOutputShapes) {
  Graph r = build_zoo_model("resnet18:image=32,batch=2,classes=7");
  EXPECT_EQ(r.value(r.inputs.at(0)).name, "input");
  EXPECT_EQ(r.value(r.inputs.at(0)).shape, (Shape{2, 3, 32, 32}));
  EXPECT_EQ(output_of(r).shape, (Shape{2, 7}));

  Graph v = build_zoo_model("r3d_18:frames=4,image=16,classes=10");
  EXPECT_EQ(v.value(v.inputs.at(0)).shape, (Shape{1, 3, 4, 16, 16}));

  Graph t = build_zoo_model("bert-tiny:seq=8,vocab=100,batch=3");
  EXPECT_EQ(t.value(t.inputs.at(0)).name, "input_ids");
  EXPECT_EQ(t.value(t.inputs.at(0)).dtype, DType::I64);
  EXPECT_EQ(output_of(t).shape, (Shape{3, 8, 128}));

  Graph gp = build_zoo_model(kSmall.at("gpt2"));
  EXPECT_EQ(output_of(gp).shape, (Shape{1, 8, 100}));  // logits over the vocabulary

  Graph d = build_zoo_model("dcgan:nz=16,ngf=8,image=32,batch=2");
  EXPECT_EQ(d.value(d.inputs.at(0)).name, "z");
  EXPECT_EQ(d.value(d.inputs.at(0)).shape, (Shape{2, 16, 1, 1}));
  EXPECT_EQ(output_of(d).shape, (Shape{2, 3, 32, 32}));

  Graph l = build_zoo_model(kSmall.at("llama_layer"));
  EXPECT_EQ(l.value(l.inputs.at(0)).shape, (Shape{1, 8, 64}));
  EXPECT_EQ(output_of(l).shape, (Shape{1, 8, 64}));
}

// The spatial size that reaches the classifier's GlobalAveragePool.
int64_t final_spatial(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.op == Op::GlobalAveragePool) return g.value(n.inputs[0]).shape.at(2);
  return -1;
}

TEST(Zoo, ShapeParametersChangeShapes) {
  EXPECT_EQ(final_spatial(build_zoo_model("resnet50")), 7);
  EXPECT_EQ(final_spatial(build_zoo_model("resnet50:image=160")), 5);
  Graph b = build_zoo_model("bert-base:seq=64,vocab=1000");
  EXPECT_EQ(output_of(b).shape, (Shape{1, 64, 768}));
  Graph t = build_zoo_model("bert-tiny:seq=64,batch=2");
  EXPECT_EQ(output_of(t).shape, (Shape{2, 64, 128}));
  // More layers, more nodes.
  size_t one = build_zoo_model("bert-tiny:layers=1").nodes.size();
  size_t two = build_zoo_model("bert-tiny:layers=2").nodes.size();
  EXPECT_GT(two, one);
}

TEST(Zoo, DefaultFlopsMatchPublishedNumbers) {
  // Published multiply-accumulates (torchvision's model cards, BERT-base at seq 128); one
  // multiply-add is 2 FLOPs here.
  const std::pair<const char*, double> kGmacs[] = {
      {"resnet50", 4.09},  {"resnet18", 1.81},    {"mobilenet_v2", 0.30},
      {"googlenet", 1.50}, {"densenet121", 2.83}, {"mobilenet_v3_large", 0.217},
      {"bert-base", 11.2},
  };
  for (auto [name, gmacs] : kGmacs) {
    double flops = total_flops(build_zoo_model(name));
    EXPECT_NEAR(flops / (2e9 * gmacs), 1.0, 0.10) << name << ": " << flops / 1e9 << " GFLOP";
  }
}

TEST(Zoo, SmallModelsInterpretToFiniteValues) {
  for (const char* name : {"resnet18", "mobilenet_v3_small", "bert-tiny", "gpt2", "llama_layer",
                           "dcgan", "densenet121"}) {
    SCOPED_TRACE(name);
    Graph g = build_zoo_model(kSmall.at(name), 3);
    std::vector<Tensor> out = interpret(g, random_inputs(g));
    ASSERT_EQ(out.size(), 1u);
    double sum_abs = 0;
    for (int64_t i = 0; i < out[0].numel(); i++) {
      ASSERT_TRUE(std::isfinite(out[0].get_f(i))) << "element " << i;
      sum_abs += std::fabs(out[0].get_f(i));
    }
    EXPECT_GT(sum_abs, 0.0);  // not collapsed to zero either
  }
}

TEST(Zoo, WeightsFollowTheSeed) {
  auto first_weight = [](uint64_t seed) {
    Graph g = build_zoo_model("resnet18:image=32", seed);
    const Value& w = g.value(g.nodes.at(0).inputs.at(1));
    EXPECT_TRUE(w.is_constant());
    return std::vector<float>(w.data->data<float>(), w.data->data<float>() + w.data->numel());
  };
  EXPECT_EQ(first_weight(5), first_weight(5));
  EXPECT_NE(first_weight(5), first_weight(6));
}

TEST(ZooSpec, ParsesNameAndParameters) {
  ZooSpec s = parse_zoo_spec("bert-base:seq=64,batch=2");
  EXPECT_EQ(s.name, "bert-base");
  EXPECT_EQ(s.params.at("seq"), 64);
  EXPECT_EQ(s.params.at("batch"), 2);
  EXPECT_EQ(s.params.at("hidden"), 768);  // defaults filled in
  EXPECT_EQ(parse_zoo_spec("resnet50").params.at("image"), 224);
  EXPECT_TRUE(is_zoo_name("resnet50"));
  EXPECT_TRUE(is_zoo_name("bert-base:seq=64"));
  EXPECT_TRUE(is_zoo_name("bert-base:nonsense"));  // names the model; parsing reports the rest
  EXPECT_FALSE(is_zoo_name("resnet50.onnx"));
  EXPECT_FALSE(is_zoo_name("models/resnet50.onnx"));
  EXPECT_FALSE(is_zoo_name(""));
}

TEST(ZooSpec, ErrorsAreUserErrorsListingValidChoices) {
  std::string e = user_error_of("resnet51");
  EXPECT_NE(e.find("unknown zoo model 'resnet51'"), std::string::npos) << e;
  EXPECT_NE(e.find("resnet50"), std::string::npos) << e;
  EXPECT_NE(e.find("bert-base"), std::string::npos) << e;

  e = user_error_of("bert-base:sq=64");
  EXPECT_NE(e.find("no parameter 'sq'"), std::string::npos) << e;
  EXPECT_NE(e.find("seq"), std::string::npos) << e;
  EXPECT_NE(e.find("batch"), std::string::npos) << e;

  e = user_error_of("bert-base:seq=abc");
  EXPECT_NE(e.find("'abc'"), std::string::npos) << e;
  EXPECT_NE(e.find("not an integer"), std::string::npos) << e;
  for (const char* bad : {"resnet50:image=", "resnet50:image=12x", "resnet50:image=1.5",
                          "resnet50:image=99999999999999999999999"})
    EXPECT_NE(user_error_of(bad).find("not an integer"), std::string::npos) << bad;

  e = user_error_of("bert-base:seq=0");
  EXPECT_NE(e.find("out of range [1, 512]"), std::string::npos) << e;
  EXPECT_NE(user_error_of("resnet50:batch=-1").find("out of range"), std::string::npos);

  EXPECT_NE(user_error_of("resnet50:image").find("key=value"), std::string::npos);
  EXPECT_NE(user_error_of("resnet50:").find("key=value"), std::string::npos);
  EXPECT_NE(user_error_of("resnet50:image=64,").find("key=value"), std::string::npos);
  EXPECT_NE(user_error_of("resnet50:image=64,image=96").find("twice"), std::string::npos);

  // Weight budget: refused before anything that large is allocated.
  e = user_error_of("bert-base:vocab=1048576,hidden=16384,heads=16");
  EXPECT_NE(e.find("GiB"), std::string::npos) << e;
  EXPECT_NE(e.find("embeddings.word"), std::string::npos) << e;

  // Constraints between parameters.
  EXPECT_NE(user_error_of("bert-tiny:hidden=100,heads=3").find("must divide"), std::string::npos);
  EXPECT_NE(user_error_of("vgg16:image=64").find("multiple of 7"), std::string::npos);
  EXPECT_NE(user_error_of("dcgan:image=48").find("power of two"), std::string::npos);
  EXPECT_NE(user_error_of("llama_layer:hidden=12,heads=4").find("even"), std::string::npos);
}

TEST(ZooSpec, RegistryDescribesEveryModel) {
  for (const ZooInfo& info : zoo_models()) {
    EXPECT_FALSE(info.family.empty()) << info.name;
    EXPECT_FALSE(info.description.empty()) << info.name;
    ASSERT_FALSE(info.params.empty()) << info.name;
    EXPECT_EQ(info.params.at(0).name, "batch") << info.name;
    for (const ZooParamInfo& p : info.params) {
      EXPECT_LE(p.min, p.def) << info.name << "." << p.name;
      EXPECT_LE(p.def, p.max) << info.name << "." << p.name;
    }
  }
}

}  // namespace
}  // namespace tlm

namespace tlm {
namespace {

// Channel-blocked activations (graph/passes.h block_channels) change the graph, not the function:
// every small CNN of the zoo, blocked by 8 and by 16, interprets to the original outputs; its
// convolutions count the same FLOPs, plus those of padded channels (a few percent).
TEST(Zoo, ChannelBlockedGraphsComputeTheSameFunction) {
  for (const char* name : {"resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small",
                           "densenet121", "googlenet", "vgg16"}) {
    Graph g = build_zoo_model(kSmall.at(name), 3);
    prepare_graph(g);
    std::vector<Tensor> in = random_inputs(g);
    std::vector<Tensor> want = interpret(g, in);
    double flops = 0;
    for (const Node& n : g.nodes) flops += n.op == Op::Conv ? node_flops(g, n) : 0;
    for (int block : {8, 16}) {
      SCOPED_TRACE(std::string(name) + " block " + std::to_string(block));
      Graph b = g;
      block_channels(b, block);
      int blocked = 0;
      double bflops = 0;
      for (const Node& n : b.nodes) {
        blocked += n.op == Op::ConvNchwc;
        if (n.op == Op::Conv || n.op == Op::ConvNchwc) bflops += node_flops(b, n);
      }
      EXPECT_GT(blocked, 0);
      EXPECT_GE(bflops, flops * (1 - 1e-9));
      EXPECT_LE(bflops, 1.25 * flops);
      std::vector<Tensor> got = interpret(b, in);
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < got.size(); k++)
        EXPECT_LE(max_rel_violation(got[k], want[k], 1e-5, 1e-5), 1.0) << "output " << k;
    }
  }
}

}  // namespace
}  // namespace tlm
