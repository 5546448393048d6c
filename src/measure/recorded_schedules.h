// The recorded program deployed for each task, as a schedule: what the tuner's end-to-end step,
// `tlm compile` and (later) the language model's deployment apply to a whole model.
//
//   best_sentences_from_records(p, file, hw)  per task of the partition, the deployed choice
//                                             among its error-free records on this hardware,
//                                             "" where the records have none (UserError when no
//                                             task has one: e.g. records of another machine): the
//                                             task's latest in-model selection's pick when it
//                                             has one (in_model_choices), else the fastest by
//                                             deployment_ranking and deployed_choice
//   in_model_choices(records, hw)             per task, the fastest of its latest in-model
//                                             selection (tune/in_model.h; records.h,
//                                             kInModelSuffix)
//   deployment_ranking(ranked)                what that choice ranks: the tuner's re-measurements
//                                             where a task has any, else every record
//   deployed_choice(printer, threads, ranked)  the fastest program, except that at two or more
//                                             threads a blocked convolution takes its fastest
//                                             row-split program (space.h, "Row splits") when that
//                                             is within kRowSplitTolerance of the fastest
//   best_schedule_hook(p, best, hw)           a runtime ScheduleHook (runtime/executor.h) that
//                                             applies them: a sentence is replayed on the task's
//                                             space, a marker re-runs that Halide autoscheduler,
//                                             "" gets the default schedule
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "language/sentence.h"
#include "measure/records.h"
#include "partition/partition.h"
#include "runtime/executor.h"

namespace tlm {

std::vector<std::string> best_sentences_from_records(const Partition& p,
                                                     const std::string& records_path,
                                                     const HardwareInfo& hw);

// Task key -> the sentence with the lowest median among the error-free in-model selection
// records (records.h, is_in_model_selection) of `hardware` carrying the task's latest selection
// timestamp. The programs of one selection were timed inside one model taking turns, which is
// what deployment wants to know; the hot records of a task with one are not consulted.
std::map<std::string, std::string> in_model_choices(const std::vector<MeasureRecord>& records,
                                                    const std::string& hardware);

// What a task's deployed program is chosen among, fastest first: `ranked` is the task's
// ranked_per_task() (pointers into one records vector, whose order is the files'). A task with
// re-measurements (records.h, kRemeasureSuffix) ranks only its re-measured programs, each by its
// latest re-measurement (an autoscheduler's marker counts as re-measured: its one program was
// timed with the re-measurement's samples), as the tuner chose its best (tune/tuner.h, step 4);
// a task without, every record. The search times each program once with few samples on a noisy
// machine, so the fastest of hundreds is often a lucky draw: on the model-207 machine, ranking
// every record deployed another program than the tuner chose on 2-18 of a held-out model's tasks,
// among them one re-measured 1.5x slower than its search sample (BENCHMARKS.md, session 51).
std::vector<std::pair<double, std::string>> deployment_ranking(
    const std::vector<const MeasureRecord*>& ranked);

// Measured alone, a row-split program of ResNet-50's convolutions is within a few percent of the
// channel-split best; inside the model at two threads the channel split costs up to 1.25x the
// whole model in the slow mode and nothing measurable in the fast mode. With TLM-10xg's records,
// row splits within 5% / 8% / 12% of the fastest ran the model in the slow mode at 1.16x /
// 1.10x / 1.06x ORT's time (channel splits: 1.24x) and level with it in the fast mode
// (BENCHMARKS.md, "Row splits"), so a row split within 12% of the fastest is deployed instead.
constexpr double kRowSplitTolerance = 0.12;

// `ranked`: a task's measured (median seconds, sentence), fastest first (ties: the earlier
// measurement first). Returns the sentence to deploy (an autoscheduler marker as it is).
std::string deployed_choice(const TaskPrinter& printer, int threads,
                            const std::vector<std::pair<double, std::string>>& ranked);

// UserError when a sentence is not a program of its task on this hardware.
ScheduleHook best_schedule_hook(const Partition& p, const std::vector<std::string>& best,
                                const HardwareInfo& hw);

}  // namespace tlm
