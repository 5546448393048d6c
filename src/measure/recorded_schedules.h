// The best recorded program of each task, as a schedule: what the tuner's end-to-end step, `tlm
// compile` and (later) the language model's deployment apply to a whole model.
//
//   best_sentences_from_records(p, file, hw)  per task of the partition, the best error-free
//                                             record's sentence (or autoscheduler marker) on this
//                                             hardware, "" where the records have none
//   best_schedule_hook(p, best, hw)           a runtime ScheduleHook (runtime/executor.h) that
//                                             applies them: a sentence is replayed on the task's
//                                             space, a marker re-runs that Halide autoscheduler,
//                                             "" gets the default schedule
#pragma once

#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "partition/partition.h"
#include "runtime/executor.h"

namespace tlm {

std::vector<std::string> best_sentences_from_records(const Partition& p,
                                                     const std::string& records_path,
                                                     const std::string& hw_key);

// UserError when a sentence is not a program of its task on this hardware.
ScheduleHook best_schedule_hook(const Partition& p, const std::vector<std::string>& best,
                                const HardwareInfo& hw);

}  // namespace tlm
