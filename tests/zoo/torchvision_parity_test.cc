// The zoo's CNN families against an independent reference: torchvision's own ONNX export
// (scripts/export_torchvision.py, Debian's /usr/bin/python3 with torch 1.13) of the same model at
// the same shapes. Both graphs go through prepare_graph() and partition_graph(); the task lists
// must agree exactly -- same multiset of (kind, key, weight) and the same total FLOPs.
// Small images keep the exports quick; vgg16 needs 224 (its AdaptiveAvgPool2d(7) exports only
// when 7 divides the feature map). Exports are cached in the build dir (see SetUpTestSuite).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "frontend/onnx_import.h"
#include "graph/passes.h"
#include "partition/partition.h"
#include "zoo/zoo.h"

namespace tlm {
namespace {

// Zoo specs, also understood by the export script (same syntax, same keys).
const char* const kSpecs[] = {
    "resnet18:image=64,batch=2",   "resnet50:image=64",
    "mobilenet_v2:image=64",       "mobilenet_v2:image=64,width=50,classes=10",
    "mobilenet_v3_small:image=64", "mobilenet_v3_large:image=64",
    "vgg16:image=224,classes=10",  "densenet121:image=64",
    "googlenet:image=64",          "r3d_18:frames=8,image=32",
};

const std::string kDir = std::string(TLM_BINARY_DIR) + "/zoo_parity";

// The export script's --out-dir file name: every character but [A-Za-z0-9_] becomes '_'.
std::string export_path(const std::string& spec) {
  std::string f = spec;
  for (char& c : f)
    if (!std::isalnum((unsigned char)c) && c != '_') c = '_';
  return kDir + "/" + f + ".onnx";
}

// One line per task: its kind, weight and key; sorted, so equal vectors mean equal multisets.
std::vector<std::string> task_lines(const Partition& p) {
  std::vector<std::string> lines;
  for (const Task& t : p.tasks)
    lines.push_back(t.sub.kind + " x" + std::to_string(t.weight) + "  " + t.sub.key);
  std::sort(lines.begin(), lines.end());
  return lines;
}

double total_flops(const Partition& p) {
  double f = 0;
  for (const Task& t : p.tasks) f += t.sub.flops * t.weight;
  return f;
}

// Lines of `a` missing from `b` (multiset difference), for a readable failure message.
std::string missing(std::vector<std::string> a, std::vector<std::string> b) {
  std::vector<std::string> d;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(d));
  std::string s;
  for (const std::string& line : d) s += "    " + line.substr(0, 400) + "\n";
  return s;
}

class TorchvisionParity : public ::testing::TestWithParam<const char*> {
 protected:
  // Exports the specs whose file is missing or older than the script, in one Python process.
  // The export is a pure function of (spec, script), so ctest's one-process-per-test runs reuse
  // the files; the script writes each atomically, so parallel runs never see half a file.
  static void SetUpTestSuite() {
    namespace fs = std::filesystem;
    fs::create_directories(kDir);
    std::string script = std::string(TLM_SOURCE_DIR) + "/scripts/export_torchvision.py";
    std::string cmd = "/usr/bin/python3 " + script + " --out-dir " + kDir;
    bool any = false;
    for (const char* spec : kSpecs) {
      fs::path f = export_path(spec);
      if (fs::exists(f) && fs::last_write_time(f) > fs::last_write_time(script)) continue;
      cmd += std::string(" '") + spec + "'";
      any = true;
    }
    cmd += " > " + kDir + "/export.log 2>&1";
    export_status_ = any ? std::system(cmd.c_str()) : 0;
  }
  static int export_status_;
};
int TorchvisionParity::export_status_ = -1;

TEST_P(TorchvisionParity, SameTasksAsTorchExport) {
  const std::string spec = GetParam();
  ASSERT_EQ(export_status_, 0) << "export failed; see " << kDir << "/export.log";
  ASSERT_TRUE(std::filesystem::exists(export_path(spec))) << export_path(spec);

  Graph ref = import_onnx_file(export_path(spec));
  prepare_graph(ref);
  Graph zoo = build_zoo_model(spec);
  prepare_graph(zoo);
  ASSERT_EQ(ref.value(ref.inputs.at(0)).shape, zoo.value(zoo.inputs.at(0)).shape);
  ASSERT_EQ(ref.value(ref.outputs.at(0)).shape, zoo.value(zoo.outputs.at(0)).shape);

  Partition pr = partition_graph(ref), pz = partition_graph(zoo);
  std::vector<std::string> lr = task_lines(pr), lz = task_lines(pz);
  EXPECT_EQ(pr.instances.size(), pz.instances.size());
  EXPECT_TRUE(lr == lz) << spec << ": task lists differ\n  only in torch export:\n"
                        << missing(lr, lz) << "  only in zoo:\n"
                        << missing(lz, lr);
  EXPECT_DOUBLE_EQ(total_flops(pr), total_flops(pz));
  EXPECT_GT(total_flops(pz), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Zoo, TorchvisionParity, ::testing::ValuesIn(kSpecs),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum((unsigned char)c)) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace tlm
