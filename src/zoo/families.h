// The model builders behind the zoo registry (zoo.cc), one function per architecture family.
// Each adds the graph inputs, the layers and the outputs to `b.g`, reading its parameters from
// the spec (already validated against the registry's ranges; cross-parameter constraints are
// checked here and reported as UserErrors).
//   cnn.cc          resnet, mobilenet_v2, mobilenet_v3, vgg16, densenet121, googlenet, r3d_18
//   transformer.cc  bert, gpt2, llama_layer
//   other.cc        dcgan
#pragma once

#include "zoo/builder.h"
#include "zoo/zoo.h"

namespace tlm::zoo {

void build_resnet(ModelBuilder& b, const ZooSpec& spec);  // resnet18, resnet50
void build_mobilenet_v2(ModelBuilder& b, const ZooSpec& spec);
void build_mobilenet_v3(ModelBuilder& b, const ZooSpec& spec);  // _small, _large
void build_vgg16(ModelBuilder& b, const ZooSpec& spec);
void build_densenet121(ModelBuilder& b, const ZooSpec& spec);
void build_googlenet(ModelBuilder& b, const ZooSpec& spec);
void build_r3d_18(ModelBuilder& b, const ZooSpec& spec);
void build_bert(ModelBuilder& b, const ZooSpec& spec);  // bert-tiny, bert-base, bert-large
void build_gpt2(ModelBuilder& b, const ZooSpec& spec);
void build_llama_layer(ModelBuilder& b, const ZooSpec& spec);
void build_dcgan(ModelBuilder& b, const ZooSpec& spec);

}  // namespace tlm::zoo
