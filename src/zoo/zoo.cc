// The zoo registry: one row per model (name, family, description, parameter table, builder), and
// the spec parser. Parameter rows carry default and accepted range; anything not in the row is
// rejected with a message listing what is valid (STYLE.md habit 11: strict configuration).
#include "zoo/zoo.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "zoo/families.h"

namespace tlm {
namespace {

using zoo::ModelBuilder;
using Builder = void (*)(ModelBuilder&, const ZooSpec&);

struct ModelRow {
  ZooInfo info;
  Builder build;
};

ZooParamInfo batch_param() { return {"batch", 1, 1, 1024, "batch size"}; }
ZooParamInfo image_param(int64_t def, int64_t min) {
  return {"image", def, min, 2048, "input height = width in pixels"};
}
ZooParamInfo classes_param(int64_t def) { return {"classes", def, 1, 100000, "output classes"}; }

std::vector<ZooParamInfo> classifier_params(int64_t image_min = 32) {
  return {batch_param(), image_param(224, image_min), classes_param(1000)};
}

std::vector<ZooParamInfo> with(std::vector<ZooParamInfo> base, const ZooParamInfo& extra) {
  base.push_back(extra);
  return base;
}

std::vector<ZooParamInfo> transformer_params(int64_t max_seq, int64_t layers, int64_t hidden,
                                             int64_t heads, int64_t ff, int64_t vocab) {
  std::vector<ZooParamInfo> p = {batch_param(),
                                 {"seq", 128, 1, max_seq, "sequence length"},
                                 {"layers", layers, 1, 128, "transformer layers"},
                                 {"hidden", hidden, 1, 16384, "hidden size"},
                                 {"heads", heads, 1, 256, "attention heads (must divide hidden)"},
                                 {"ff", ff, 1, 65536, "MLP inner width"}};
  if (vocab > 0) p.push_back({"vocab", vocab, 1, 1 << 20, "vocabulary size"});
  return p;
}

const std::vector<ModelRow>& registry() {
  static const std::vector<ModelRow> rows = {
      {{"resnet18", "cnn", "ResNet-18 (torchvision)", classifier_params()}, zoo::build_resnet},
      {{"resnet50", "cnn", "ResNet-50 v1.5 (torchvision)", classifier_params()}, zoo::build_resnet},
      {{"mobilenet_v2", "cnn", "MobileNet-V2 (torchvision)",
        with(classifier_params(), {"width", 100, 10, 400, "width multiplier in percent"})},
       zoo::build_mobilenet_v2},
      {{"mobilenet_v3_small", "cnn", "MobileNet-V3 small (torchvision)", classifier_params()},
       zoo::build_mobilenet_v3},
      {{"mobilenet_v3_large", "cnn", "MobileNet-V3 large (torchvision)", classifier_params()},
       zoo::build_mobilenet_v3},
      {{"vgg16", "cnn", "VGG-16 without BN (torchvision); image/32 must be a multiple of 7",
        with(classifier_params(), {"fc", 4096, 1, 65536, "classifier hidden width"})},
       zoo::build_vgg16},
      {{"densenet121", "cnn", "DenseNet-121 (torchvision)",
        with(classifier_params(), {"growth", 32, 1, 256, "growth rate"})},
       zoo::build_densenet121},
      {{"googlenet", "cnn", "GoogLeNet / Inception v1 (torchvision, eval: no aux heads)",
        classifier_params()},
       zoo::build_googlenet},
      {{"r3d_18",
        "cnn",
        "3-D ResNet-18 video classifier (torchvision.models.video)",
        {batch_param(),
         {"frames", 16, 1, 1024, "input frames"},
         image_param(112, 16),
         classes_param(400)}},
       zoo::build_r3d_18},
      {{"bert-tiny", "transformer", "BERT-tiny encoder (2 layers, hidden 128)",
        transformer_params(512, 2, 128, 2, 512, 30522)},
       zoo::build_bert},
      {{"bert-base", "transformer", "BERT-base encoder (12 layers, hidden 768)",
        transformer_params(512, 12, 768, 12, 3072, 30522)},
       zoo::build_bert},
      {{"bert-large", "transformer", "BERT-large encoder (24 layers, hidden 1024)",
        transformer_params(512, 24, 1024, 16, 4096, 30522)},
       zoo::build_bert},
      {{"gpt2", "transformer", "GPT-2 with LM head (defaults: GPT-2 small)",
        transformer_params(1024, 12, 768, 12, 3072, 50257)},
       zoo::build_gpt2},
      {{"llama_layer", "transformer",
        "LLaMA decoder layer(s) on hidden states (defaults: LLaMA-7B dims)",
        transformer_params(8192, 1, 4096, 32, 11008, 0)},
       zoo::build_llama_layer},
      {{"dcgan",
        "generative",
        "DCGAN generator: ConvTranspose + BN + ReLU, Tanh",
        {batch_param(),
         {"nz", 100, 1, 4096, "latent size"},
         {"ngf", 64, 1, 1024, "generator base width"},
         {"image", 64, 8, 1024, "output height = width (a power of two)"}}},
       zoo::build_dcgan},
  };
  return rows;
}

const ModelRow* find_model(const std::string& name) {
  for (const ModelRow& r : registry())
    if (r.info.name == name) return &r;
  return nullptr;
}

std::string model_names() {
  std::string s;
  for (const ModelRow& r : registry()) s += (s.empty() ? "" : ", ") + r.info.name;
  return s;
}

std::string param_names(const ZooInfo& info) {
  std::string s;
  for (const ZooParamInfo& p : info.params) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

// A whole decimal integer, or false (no partial parses, no overflow).
bool parse_int(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  for (size_t i = 0; i < s.size(); i++)
    if (!(std::isdigit((unsigned char)s[i]) || (i == 0 && (s[i] == '-' || s[i] == '+'))))
      return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return false;
  *out = v;
  return true;
}

}  // namespace

ZooSpec parse_zoo_spec(const std::string& text) {
  size_t colon = text.find(':');
  ZooSpec spec;
  spec.name = text.substr(0, colon);
  const ModelRow* row = find_model(spec.name);
  if (!row)
    TLM_USER_ERROR() << "unknown zoo model '" << spec.name << "'; known models: " << model_names();
  for (const ZooParamInfo& p : row->info.params) spec.params[p.name] = p.def;
  if (colon == std::string::npos) return spec;

  std::map<std::string, bool> seen;
  std::stringstream items(text.substr(colon + 1));
  std::string item;
  bool any = false;
  while (std::getline(items, item, ',')) {
    any = true;
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      TLM_USER_ERROR() << "zoo spec '" << text << "': expected key=value, got '" << item
                       << "'; parameters of " << spec.name << ": " << param_names(row->info);
    std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    const ZooParamInfo* p = nullptr;
    for (const ZooParamInfo& q : row->info.params)
      if (q.name == key) p = &q;
    if (!p)
      TLM_USER_ERROR() << "zoo model " << spec.name << " has no parameter '" << key
                       << "'; valid parameters: " << param_names(row->info);
    if (seen[key]) TLM_USER_ERROR() << "zoo spec '" << text << "' sets '" << key << "' twice";
    seen[key] = true;
    int64_t v = 0;
    if (!parse_int(val, &v))
      TLM_USER_ERROR() << "zoo spec '" << text << "': value '" << val << "' of '" << key
                       << "' is not an integer (" << p->help << ", default " << p->def << ")";
    if (v < p->min || v > p->max)
      TLM_USER_ERROR() << "zoo spec '" << text << "': " << key << "=" << v << " is out of range ["
                       << p->min << ", " << p->max << "] (" << p->help << ")";
    spec.params[key] = v;
  }
  if (!any || text.back() == ',')
    TLM_USER_ERROR() << "zoo spec '" << text << "': expected key=value after ':'; parameters of "
                     << spec.name << ": " << param_names(row->info);
  return spec;
}

Graph build_zoo_model(const std::string& text, uint64_t seed) {
  ZooSpec spec = parse_zoo_spec(text);
  ModelBuilder b;
  b.seed = seed;
  b.g.name = text;
  find_model(spec.name)->build(b, spec);
  b.g.remove_dead();  // drops tables that only fed folded constants (positions, token types)
  return std::move(b.g);
}

bool is_zoo_name(const std::string& text) {
  return find_model(text.substr(0, text.find(':'))) != nullptr;
}

std::vector<ZooInfo> zoo_models() {
  std::vector<ZooInfo> out;
  for (const ModelRow& r : registry()) out.push_back(r.info);
  return out;
}

}  // namespace tlm
