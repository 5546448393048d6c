// The workload sets of the offline dataset (paper §4.3: zoo models with shape variants, some
// held out for evaluation).
//
//   training_workloads()   zoo models x shape variants (image sizes, sequence lengths, batch)
//   heldout_workloads()    the evaluation workloads: the end-to-end benchmark models at their
//                          benchmark shapes; no task of them may appear in training data
//   expand_workloads(xs)   "train" / "heldout" / zoo specs -> zoo specs
//   canonical_workload(s)  the spec with every parameter spelled out (identity of a workload)
//   workload_tasks(spec)   build the zoo model, prepare, partition: its unique tasks
//
// A spec may end in "@nchw<B>c": the model's convolutions on channel-blocked activations
// (graph/passes.h block_channels, docs/layout.md). Such a workload's tasks are written for
// machines with B vector lanes (workload_fits): the sampler pairs them with those only.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "partition/partition.h"

namespace tlm {

std::vector<std::string> training_workloads();
std::vector<std::string> heldout_workloads();

// A zoo spec with every parameter written out, sorted: "resnet50" and "resnet50:image=224" both
// give "resnet50:batch=1,classes=1000,image=224". UserError for a bad spec.
std::string canonical_workload(const std::string& spec);

// "SPEC@LAYOUT" -> (SPEC, LAYOUT); LAYOUT is "" without a suffix.
std::pair<std::string, std::string> split_layout(const std::string& spec);

// The channel block of a spec ("...@nchw16c" -> 16), 0 without a layout suffix.
int workload_block(const std::string& spec);
// True when a machine with `lanes` vector lanes runs the workload's tasks as written: no block,
// or a block of `lanes`.
bool workload_fits(const std::string& spec, int lanes);

// Replaces the set names "train" and "heldout" by their specs; other entries must be zoo specs
// (UserError otherwise). Specs of the same workload are kept once, first spelling first.
std::vector<std::string> expand_workloads(const std::vector<std::string>& names);

// The unique tasks of one zoo workload (weights seeded with 0: they never enter a task).
// Memoized per process (thread-safe): a spec's model is built once. flat_pixels = false: as
// before the layout pass flattened narrow pointwise convolutions (graph/passes.h), for the
// held-out rule, which leaves out the tasks of both forms.
std::vector<Subgraph> workload_tasks(const std::string& spec, bool flat_pixels = true);

}  // namespace tlm
