// Isolation of untrusted work: run a function in a forked child process with a deadline, so that a
// candidate program that crashes, hangs or corrupts memory costs one record, not the tuner.
//
// run_isolated(fn, timeout) forks; the child runs fn and sends back its string result over a pipe
// (length-prefixed frames), then leaves with _exit() so it never runs the parent's atexit
// handlers or flushes the parent's stdio buffers (the parent flushes its own before forking, so
// nothing is written twice). The parent waits with poll() on the pipe and on a pidfd; past the
// deadline it SIGKILLs the child's whole process group and reaps it. Every call reaps its child
// and closes its descriptors, so it can be called any number of times.
//
// run_isolated_phases() is the two-deadline form for "compile, then run": the compiled program
// lives in the child's memory, so both phases must happen in one child. fn calls end_phase1()
// when building is done; the parent then restarts the clock with the second timeout and reports
// the phase an outcome happened in, which error_kind_for() maps to Compile*/Run* error kinds.
//
// Caveat: the child is a fork of the caller. Fork from a thread while other threads hold locks
// (a thread pool, an allocator without fork handlers) and the child may deadlock; the deadline
// turns that into a Timeout rather than a hang. If fn itself calls exit(), atexit handlers do run
// in the child: do not call exit() inside fn.
#pragma once

#include <functional>
#include <string>

#include "measure/records.h"

namespace tlm {

enum class WorkerStatus {
  Ok,       // fn returned; payload is its result
  Timeout,  // the deadline of the current phase passed; the child was killed
  Crash,    // the child died (signal) or exited without sending a result (exit_code)
  Error,    // fn threw; payload is the exception's what()
};
const char* worker_status_name(WorkerStatus s);  // "Ok", "Timeout", "Crash", "Error"

struct WorkerResult {
  WorkerStatus status = WorkerStatus::Crash;
  std::string payload;   // Ok: fn's result; Error: the exception message
  int phases = 1;        // 1 from run_isolated, 2 from run_isolated_phases
  int phase = 1;         // the phase the outcome happened in
  int signal = 0;        // Crash: the signal that ended the child; 0 if it exited
  int exit_code = 0;     // Crash without a signal: the child's exit status
  double elapsed_s = 0;  // wall time from fork to outcome
  // One line for logs and MeasureRecord::error_msg, e.g. "crashed in phase 2: signal 11
  // (Segmentation fault)"; the phase is named only for two-phase runs.
  std::string describe() const;
};

WorkerResult run_isolated(const std::function<std::string()>& fn, double timeout_s);

// fn gets the callback that ends phase 1; calling it again does nothing. A fn that never calls it
// spends its whole life in phase 1.
using EndPhase = std::function<void()>;
WorkerResult run_isolated_phases(const std::function<std::string(const EndPhase& end_phase1)>& fn,
                                 double phase1_timeout_s, double phase2_timeout_s);

// The record error kind for an outcome, reading phase 1 as compiling and phase 2 as running:
// Ok -> None, Timeout -> CompileTimeout/RunTimeout, Error -> CompileError/RuntimeError,
// Crash -> Crash.
ErrorKind error_kind_for(const WorkerResult& r);

}  // namespace tlm
