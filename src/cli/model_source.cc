#include "cli/model_source.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "frontend/onnx_import.h"
#include "frontend/tensor_proto.h"
#include "graph/passes.h"
#include "hardware/hardware.h"
#include "language/workloads.h"
#include "runtime/executor.h"
#include "runtime/random_inputs.h"
#include "zoo/zoo.h"

namespace tlm {
namespace {

bool is_regular_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& flags) {
  std::map<std::string, int64_t> dims;
  for (const std::string& f : flags) {
    size_t eq = f.find('=');
    TLM_USER_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < f.size())
        << "--dim expects NAME=VALUE (e.g. --dim batch=1), got '" << f << "'";
    std::string name = f.substr(0, eq), text = f.substr(eq + 1);
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    TLM_USER_CHECK(errno == 0 && end && *end == '\0')
        << "--dim " << name << ": '" << text << "' is not an integer";
    TLM_USER_CHECK(v >= 1) << "--dim " << name << "=" << v << ": a dimension must be at least 1";
    TLM_USER_CHECK(dims.emplace(name, (int64_t)v).second) << "--dim " << name << " given twice";
  }
  return dims;
}

Graph load_model(const std::string& text, const std::map<std::string, int64_t>& dims,
                 uint64_t seed, const std::string& layout) {
  // A zoo spec may carry its layout ("resnet50:image=160@nchw16c", as the workload lists write
  // it), unless --layout names another one. Otherwise "auto" (the default of the commands that
  // deploy a model) blocks the channels by the CPU's vector lanes: the layout tuned programs are
  // fastest in (docs/layout.md).
  std::string spec = text, lay = layout;
  auto [zoo, suffix] = split_layout(text);
  if (!suffix.empty() && is_zoo_name(zoo)) {
    TLM_USER_CHECK(layout == "auto" || layout == "nchw" || layout == suffix)
        << "'" << text << "' names layout " << suffix << " but --layout says " << layout;
    spec = zoo;
    lay = suffix;
  }
  if (lay == "auto") lay = "nchwc";
  // The machine's lanes matter only to "nchwc" (no hardware probe for the other layouts).
  const int block = layout_block(lay, lay == "nchwc" ? detect_hardware().vector_bits / 32 : 0);
  Graph g;
  if (is_zoo_name(spec)) {
    TLM_USER_CHECK(dims.empty())
        << "--dim applies to .onnx files; give zoo model parameters in the spec, e.g. "
           "resnet50:batch=2,image=160 (see `tlm zoo`)";
    g = build_zoo_model(spec, seed);
  } else if (is_regular_file(text) || ends_with(text, ".onnx") ||
             text.find('/') != std::string::npos) {
    ImportOptions opts;
    opts.dims = dims;
    g = import_onnx_file(text, opts);
  } else {
    // Neither a file nor a known name: let the zoo explain, listing the models it has.
    g = build_zoo_model(text, seed);
  }
  prepare_graph(g);
  if (block > 0) block_channels(g, block);
  return g;
}


std::vector<Tensor> read_inputs(const Graph& g, const std::vector<std::string>& paths) {
  if (paths.size() != g.inputs.size()) {
    std::string names;
    for (ValueId v : g.inputs) names += (names.empty() ? "" : ", ") + g.value(v).name;
    TLM_USER_ERROR() << "the model has " << g.inputs.size() << " input(s) (" << names << "), got "
                     << paths.size() << " --input file(s)";
  }
  std::vector<Tensor> ins;
  for (const std::string& p : paths) ins.push_back(read_tensor_proto_file(p));
  check_model_inputs(g, ins);
  return ins;
}

}  // namespace tlm
