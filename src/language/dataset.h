// The offline dataset of tensor sentences (paper §4.3, Algorithm 1): uniform random programs for
// every task of a set of workloads, written as text shards, with a vocabulary and a manifest.
//
//   sample_dataset(options)  extracts the tasks (zoo model -> prepare -> partition), drops tasks
//                            of held-out workloads, builds each task's space once, samples
//                            programs with a per-task RNG (no compilation), de-duplicates them
//                            on the canonical sentence, shuffles, and writes
//                              DIR/shard-00000.txt ...  one sentence per line
//                              DIR/tokenizer.json       language/tokenizer.h
//                              DIR/manifest.json        versions, seed, workloads, held-out list,
//                                                       counts, per-task table, timings
//   load_manifest(dir)       reads the manifest back; UserError for another version
//
// The sentences written depend only on the options other than `jobs` and `progress`: work
// is split by task, each task draws from its own generator seeded by (seed, task key), and the
// final order is a seeded shuffle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tlm {

// Bump when the layout of the dataset directory or manifest changes.
constexpr int kDatasetVersion = 2;  // 2: tokenizer.json instead of vocab.json

struct SampleOptions {
  std::string out_dir;         // created if needed
  int64_t sentences = 500000;  // sentences to write in total
  uint64_t seed = 0;           // determines every sentence and their order
  int jobs =
      0;  // sampling threads, 0: compute_threads() (support/threads.h); never changes the output
  std::vector<std::string> workloads = {"train"};  // zoo specs or the sets "train"/"heldout"
  bool exclude_heldout = true;  // drop tasks whose key occurs in a held-out workload
  // Hardware keys ("isa=avx2,cores=2,...") to write sentences for, every task once per key (the
  // machines of a kind differ: AVX-512 and AVX2-only CPUs); empty: this machine.
  std::vector<std::string> hardware;
  int64_t shard_lines = 100000;  // sentences per shard file
  bool progress = true;          // progress lines on stderr
};

struct SampleReport {
  int64_t sentences = 0;
  int64_t tasks = 0;            // tasks sampled
  int64_t excluded_tasks = 0;   // unique task keys dropped because a held-out workload has them
  int64_t failed_tasks = 0;     // tasks whose space could not be built (listed in the manifest)
  int64_t exhausted_tasks = 0;  // tasks with fewer distinct programs than their share
  int64_t duplicates = 0;       // draws rejected as already sampled
  int64_t shards = 0;
  int64_t vocab_size = 0;       // model tokens of the tokenizer
  size_t max_tokens = 0;        // longest sentence written
  size_t median_tokens = 0;     // over the sentences written
  size_t max_model_tokens = 0;  // longest sentence in model tokens, <bos> and <eos> included
  double extract_s = 0;         // building models and partitioning
  double spaces_s = 0;          // lowering and building spaces
  double sample_s = 0;          // drawing programs
  double write_s = 0;           // printing and writing shards and vocabulary
  double total_s = 0;
  double sentences_per_s() const { return total_s > 0 ? sentences / total_s : 0; }
};

SampleReport sample_dataset(const SampleOptions& o);

struct DatasetManifest {
  std::string dir;
  uint64_t seed = 0;
  int64_t sentences = 0;
  std::vector<std::string> shards;    // paths, in order
  std::string tokenizer;              // path of tokenizer.json
  std::vector<std::string> hardware;  // the machines its sentences were written for
  int64_t max_model_tokens = 0;       // the longest sentence in model tokens (the model's context)
  std::vector<std::string> workloads;
  std::vector<std::string> heldout;
  int64_t excluded_tasks = 0;
  std::vector<std::string> task_hashes;  // key_hash() of every task sampled
};
DatasetManifest load_manifest(const std::string& dir);

// A stable 64-bit FNV-1a hash of a task key, as 16 hex digits (the manifest lists tasks by it).
std::string key_hash(const std::string& key);

}  // namespace tlm
