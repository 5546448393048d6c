// The language model's schedules for a whole model, with no measurement: per task, the program
// its zero-shot mode chooses (tune/lm_search.h), as a sentence. `tlm run --schedules tlm` times
// them beside the default schedules; `tlm compile --tlm` builds an artifact with them.
//
//   lm_schedules(p, hw, ckpt, label, mode, ranker)  one sentence per Partition::tasks entry; says
//                                                   (prefixed by `label`) how many tasks were
//                                                   among the checkpoint's fine-tuning
//                                                   demonstrations and the ranker's training
//                                                   tasks (the held-out check) and how many
//                                                   chosen programs are expert programs
//   tasks_among(p, hashes)                          how many tasks' hex_hash(key) are in `hashes`
#pragma once

#include <set>
#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "partition/partition.h"

namespace tlm {

// `ckpt` "" = the shipped models/tlm.ckpt; `mode` a --zero-shot mode (kZeroShotModeNames);
// `ranker` "" = the shipped models/ranker.json (mode ranker). UserError when either does not load.
std::vector<std::string> lm_schedules(const Partition& p, const HardwareInfo& hw,
                                      const std::string& ckpt, const std::string& label,
                                      const std::string& mode, const std::string& ranker);

int tasks_among(const Partition& p, const std::set<std::string>& hashes);

}  // namespace tlm
