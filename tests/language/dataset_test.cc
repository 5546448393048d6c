// tlm sample: deterministic for a seed (whatever the thread count), versioned manifest and
// tokenizer, held-out tasks never in training data, sentences that parse back.
#include "language/dataset.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "graph/passes.h"
#include "language/sentence.h"
#include "language/tokenizer.h"
#include "language/workloads.h"
#include "zoo/zoo.h"

namespace tlm {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the build tree, removed when the test ends.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::string(TLM_BINARY_DIR) + "/language_test_" + name) {
    fs::remove_all(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  operator const std::string&() const { return path_; }

 private:
  std::string path_;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const DatasetManifest& m) {
  std::vector<std::string> out;
  for (const std::string& s : m.shards) {
    std::ifstream f(s);
    for (std::string line; std::getline(f, line);) out.push_back(line);
  }
  return out;
}

SampleOptions small_options(const std::string& dir, uint64_t seed, int threads) {
  SampleOptions o;
  o.out_dir = dir;
  o.sentences = 1500;
  o.seed = seed;
  o.jobs = threads;
  o.workloads = {"bert-tiny:seq=32", "dcgan:image=32"};
  o.exclude_heldout = false;  // keeps the test fast; exclusion has its own test
  o.hardware = {"isa=avx2,cores=2,vec=8,l1=32k,l2=1m,l3=32m"};
  o.shard_lines = 400;
  o.progress = false;
  return o;
}

TEST(Dataset, SameSeedSameShardsWhateverTheThreads) {
  TempDir a("ds_a"), b("ds_b"), c("ds_c");
  SampleReport ra = sample_dataset(small_options(a, 11, 1));
  SampleReport rb = sample_dataset(small_options(b, 11, 2));
  sample_dataset(small_options(c, 12, 2));
  EXPECT_EQ(ra.sentences, 1500);
  EXPECT_EQ(rb.sentences, 1500);
  EXPECT_EQ(ra.shards, 4);
  DatasetManifest ma = load_manifest(a), mb = load_manifest(b), mc = load_manifest(c);
  ASSERT_EQ(ma.shards.size(), 4u);
  for (size_t i = 0; i < ma.shards.size(); i++)
    EXPECT_EQ(slurp(ma.shards[i]), slurp(mb.shards[i])) << ma.shards[i];
  EXPECT_EQ(slurp(ma.tokenizer), slurp(mb.tokenizer));
  EXPECT_NE(lines_of(ma), lines_of(mc)) << "another seed should give other sentences";

  // Every line is a distinct canonical sentence that the tokenizer encodes without <unk> and
  // decodes back.
  std::vector<std::string> lines = lines_of(ma);
  ASSERT_EQ(lines.size(), 1500u);
  EXPECT_EQ(std::set<std::string>(lines.begin(), lines.end()).size(), lines.size());
  Tokenizer v = load_tokenizer(ma.tokenizer);
  for (const std::string& l : lines) {
    std::vector<int> ids = v.encode(split_tokens(l));
    for (int id : ids) ASSERT_NE(id, kUnkId) << l;
    ASSERT_EQ(join_tokens(v.decode(ids)), l);
    ASSERT_LE((int64_t)ids.size() + 2, ma.max_model_tokens) << l;
  }
  for (size_t i = 0; i < lines.size(); i += 97) {
    ParsedSentence ps = parse_sentence(lines[i]);
    EXPECT_EQ(ps.sentence.to_text(), lines[i]);
  }
}

TEST(Dataset, SmallSpacesAreExhaustedAndTheRestMakesUpTheCount) {
  TempDir d("ds_small");
  SampleOptions o = small_options(d, 1, 2);
  o.workloads = {"bert-tiny:seq=32"};
  o.sentences = 20000;  // more than the injective/elementwise tasks have programs
  SampleReport r = sample_dataset(o);
  EXPECT_GT(r.exhausted_tasks, 0);
  EXPECT_EQ(r.sentences, 20000);
  std::vector<std::string> lines = lines_of(load_manifest(d));
  EXPECT_EQ(std::set<std::string>(lines.begin(), lines.end()).size(), 20000u);
}

TEST(Dataset, HeldOutTasksAreExcluded) {
  std::set<std::string> heldout;
  for (const std::string& w : heldout_workloads())
    for (const Subgraph& s : workload_tasks(w)) heldout.insert(s.key);
  TempDir d("ds_heldout");
  SampleOptions o = small_options(d, 5, 2);
  o.workloads = {"resnet18:image=224", "gpt2:seq=64,layers=1"};
  o.exclude_heldout = true;
  o.sentences = 600;
  SampleReport r = sample_dataset(o);
  // resnet18's stem, max pool and 64-channel 3x3 convs at 56x56 are tasks of resnet50 too.
  EXPECT_GT(r.excluded_tasks, 0);
  DatasetManifest m = load_manifest(d);
  EXPECT_EQ(m.heldout, heldout_workloads());
  EXPECT_EQ(m.excluded_tasks, r.excluded_tasks);
  std::set<std::string> heldout_hashes;
  for (const std::string& k : heldout) heldout_hashes.insert(key_hash(k));
  ASSERT_EQ((int64_t)m.task_hashes.size(), r.tasks);
  for (const std::string& h : m.task_hashes) EXPECT_FALSE(heldout_hashes.count(h)) << h;
  std::set<std::string> sampled_keys;
  for (const std::string& line : lines_of(m)) {
    std::string prompt = line.substr(0, line.find(" isa="));
    if (!sampled_keys.insert(prompt).second) continue;
    Subgraph s = subgraph_from_tokens(split_tokens(prompt));
    EXPECT_FALSE(heldout.count(s.key)) << s.kind;
  }
  EXPECT_GT(sampled_keys.size(), 10u);
}

TEST(Dataset, BadRequestsAreUserErrors) {
  TempDir bad("ds_bad");
  SampleOptions o = small_options(bad, 0, 1);
  o.workloads = {"heldout"};
  o.exclude_heldout = true;
  EXPECT_THROW(sample_dataset(o), UserError);
  o.workloads = {"resnet50"};  // the held-out resnet50:image=224, spelled differently
  EXPECT_THROW(sample_dataset(o), UserError);
  o.workloads = {"no-such-model"};
  EXPECT_THROW(sample_dataset(o), UserError);
  o.workloads = {"resnet18:depth=3"};
  EXPECT_THROW(sample_dataset(o), UserError);
  o = small_options("", 0, 1);
  EXPECT_THROW(sample_dataset(o), UserError);
  TempDir none("ds_none");
  EXPECT_THROW(load_manifest(none), UserError);
}

std::set<std::string> keys_of(const std::vector<Subgraph>& tasks) {
  std::set<std::string> keys;
  for (const Subgraph& s : tasks) keys.insert(s.key);
  return keys;
}

// workload_tasks() extracts deep transformer stacks from three layers: the task set must be the
// full model's.
TEST(Workloads, ShallowExtractionGivesEveryTaskOfADeepStack) {
  for (const char* spec : {"bert-tiny:layers=7", "bert-base:seq=16",
                           "gpt2:layers=6,hidden=64,heads=2,ff=128,vocab=300",
                           "llama_layer:layers=5,hidden=64,heads=2,ff=96,seq=16"}) {
    Graph g = build_zoo_model(spec, 0);
    prepare_graph(g);
    std::vector<Subgraph> full;
    for (Task& t : partition_graph(g).tasks) full.push_back(t.sub);
    EXPECT_EQ(keys_of(workload_tasks(spec)), keys_of(full)) << spec;
    EXPECT_GT(full.size(), 5u);
  }
}

TEST(Workloads, TrainingAndHeldOutSetsAreDisjointZooSpecs) {
  std::vector<std::string> train = training_workloads(), held = heldout_workloads();
  EXPECT_GE(held.size(), 4u);
  EXPECT_LE(held.size(), 10u);
  for (const std::string& h : held) EXPECT_EQ(std::count(train.begin(), train.end(), h), 0) << h;
  EXPECT_EQ(expand_workloads({"train", "heldout"}).size(), train.size() + held.size());
  EXPECT_EQ(expand_workloads({"resnet50", "resnet50:image=224", "train"}).size(), train.size() + 1);
  EXPECT_EQ(canonical_workload("resnet50"), "resnet50:batch=1,classes=1000,image=224");
  for (const std::string& w : expand_workloads({"train", "heldout"}))
    EXPECT_NO_THROW(canonical_workload(w)) << w;
}

// A layout suffix puts a workload's convolutions on channel-blocked activations (docs/layout.md):
// its tasks are ConvNchwc tasks of that block, sampled only for machines with as many lanes.
TEST(Workloads, LayoutSuffixBlocksTheConvolutions) {
  EXPECT_EQ(canonical_workload("resnet18:image=32@nchw8c"),
            "resnet18:batch=1,classes=1000,image=32@nchw8c");
  EXPECT_EQ(workload_block("resnet18:image=32@nchw8c"), 8);
  EXPECT_EQ(workload_block("resnet18:image=32"), 0);
  EXPECT_TRUE(workload_fits("resnet18:image=32@nchw8c", 8));
  EXPECT_FALSE(workload_fits("resnet18:image=32@nchw8c", 16));
  EXPECT_TRUE(workload_fits("resnet18:image=32", 16));
  EXPECT_THROW(canonical_workload("resnet18@nchwc"), UserError);  // the block must be explicit
  EXPECT_THROW(canonical_workload("resnet18@nhwc"), UserError);
  EXPECT_THROW(expand_workloads({"resnet9000@nchw8c"}), UserError);
  int blocked = 0;
  for (const Subgraph& s : workload_tasks("resnet18:image=32@nchw8c")) {
    EXPECT_FALSE(s.kind.rfind("conv2d", 0) == 0 && s.kind.find("nchwc") == std::string::npos)
        << "a plain convolution left in " << s.kind;
    for (const Node& n : s.graph.nodes)
      if (n.op == Op::ConvNchwc) {
        EXPECT_EQ(s.graph.value(n.outputs[0]).shape.back(), 8);
        blocked++;
      }
  }
  EXPECT_GE(blocked, 5);
  // Both machine kinds are covered in training and held out.
  for (int b : {8, 16}) {
    int train = 0, held = 0;
    for (const std::string& w : training_workloads()) train += workload_block(w) == b;
    for (const std::string& w : heldout_workloads()) held += workload_block(w) == b;
    EXPECT_GE(train, 4) << b;
    EXPECT_EQ(held, 2) << b;
  }
}

TEST(Dataset, BlockedWorkloadsArePairedWithMachinesOfTheirBlock) {
  TempDir d("ds_blocked");
  SampleOptions o = small_options(d, 3, 2);
  o.workloads = {"resnet18:image=32@nchw8c"};
  o.hardware = {"isa=avx2,cores=2,vec=8,l1=32k,l2=1m,l3=32m",
                "isa=avx512,cores=2,vec=16,l1=32k,l2=2m,l3=32m"};
  o.sentences = 300;
  SampleReport r = sample_dataset(o);
  EXPECT_GT(r.tasks, 5);
  int avx2 = 0;
  for (const std::string& line : lines_of(load_manifest(d))) {
    EXPECT_EQ(line.find("vec=16"), std::string::npos) << line;
    avx2 += line.find("vec=8") != std::string::npos;
  }
  EXPECT_EQ(avx2, 300);
}

}  // namespace
}  // namespace tlm
