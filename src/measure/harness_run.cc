// measure_candidates: the children and the turn-taking between them.
//
// Jobs go in batches of up to P (parallel_compiles). Each job of a batch gets a parent thread
// that runs one child with run_isolated_phases(). The child compiles under its own interval
// timer (SIGALRM kills it past the compile deadline: CompileTimeout), writes one byte on its
// `ready` pipe and blocks reading its `go` pipe. The main thread waits until every child of the
// batch is ready or finished, then writes `go` to the ready ones one at a time, each after the
// previous one's result is in. So compiles overlap each other but never a timed run, and runs
// never overlap each other. A child ends phase 1 only when it gets `go`: the run deadline
// covers its run alone; the parent's phase-1 deadline is only a backstop (compile deadline plus
// the runs it may wait for).
//
// Only the batch's threads fork, and the main thread neither prints nor touches Halide while
// they do, so no child inherits a lock held by another thread.
//
// Child -> parent payload (one line of text):
//   "ok COMPILE_S SAMPLE_S..."      measured; per-call seconds of each timing sample
//   "wrong COMPILE_S VIOLATION"     compiled and ran, but disagreed with the reference
// Exceptions, crashes and timeouts arrive as the worker's status (measure/worker.h).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <sstream>
#include <thread>

#include "measure/harness.h"
#include "measure/worker.h"
#include "support/clock.h"
#include "support/threads.h"

namespace tlm {
namespace {

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

// The pipes of one child's turn: it writes `ready[1]` when compiled and reads `go[0]`.
struct Turn {
  int ready[2] = {-1, -1};
  int go[2] = {-1, -1};
};

double compile_deadline(const Candidate& c, const MeasureOptions& o) {
  return c.autoscheduled ? o.autoschedule_timeout_s : o.compile_timeout_s;
}

void set_timer(double seconds) {
  itimerval t{};
  t.it_value.tv_sec = (time_t)seconds;
  t.it_value.tv_usec = (suseconds_t)((seconds - std::floor(seconds)) * 1e6);
  setitimer(ITIMER_REAL, &t, nullptr);
}

// Model-cache timing's flush as a Halide pipeline, so that the workers of Halide's thread pool
// (the ones the timed call uses) do the flushing and are awake when the call starts, as they are
// between two tasks of a model; a flush by threads of our own leaves them asleep, and waking
// them costs tens of microseconds per parallel loop, which a task in a model does not pay.
// Reads one byte per cache line of the scratch buffer, in parallel chunks. JIT-compiled once, in
// the parent (before any fork; it is only run in children).
struct FlushPipeline {
  Halide::ImageParam scratch{Halide::UInt(8), 1, "tlm_flush_scratch"};
  Halide::Pipeline pipeline;
  FlushPipeline() {
    Halide::Var i("i"), io("io"), ii("ii");
    Halide::Func f("tlm_flush");
    f(i) = scratch(i * 64);
    f.split(i, io, ii, 1024, Halide::TailStrategy::GuardWithIf).parallel(io);
    pipeline = Halide::Pipeline(f);
    pipeline.compile_jit(host_target());
  }
};
FlushPipeline& flush_pipeline() {
  static FlushPipeline p;
  return p;
}

// The child's work: build, wait for the turn, check, time. Throws for compile/run errors (the
// worker reports them).
std::string measure_in_child(const TaskHarness& harness, const Candidate& c,
                             const MeasureOptions& o, const Turn* turn,
                             const EndPhase& end_phase1) {
  signal(SIGALRM, SIG_DFL);
  set_timer(compile_deadline(c, o));
  if (o.quiet_children) {
    int null_fd = ::open("/dev/null", O_WRONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDOUT_FILENO);
      ::dup2(null_fd, STDERR_FILENO);
      ::close(null_fd);
    }
  }
  if (o.child_hook) o.child_hook(c, 1);
  double t0 = now_s();
  LoweredTask t = lower_subgraph(harness.sub);
  Halide::Target target = host_target();
  if (o.no_asserts) target = target.with_feature(Halide::Target::NoAsserts);
  if (c.autoscheduled)
    apply_halide_autoscheduler(t, c.autoscheduler, harness.hw, target);
  else
    apply_program(t, harness.space, c.program);
  CompiledTask ct = compile_task(t, target);
  double compile_s = now_s() - t0;
  set_timer(0);
  if (turn) {
    char byte = 'R';
    if (::write(turn->ready[1], &byte, 1) != 1) throw std::runtime_error("lost the parent");
    ssize_t n;
    do n = ::read(turn->go[0], &byte, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) throw std::runtime_error("lost the parent");
  }
  end_phase1();
  if (o.child_hook) o.child_hook(c, 2);

  // The child owns copies of the parent's pages: aliasing the inputs is safe, and programs never
  // write them.
  // Constant inputs the program wants in another storage order are packed here, once, as the
  // executor does when it binds a model's weights: not part of the timed runs.
  // Every buffer the timed runs touch is on huge pages, as in a compiled model: the tensors
  // (support/tensor.h) and the packed copies (support/huge_pages.h).
  std::vector<Halide::Buffer<>> in;
  for (size_t j = 0; j < harness.inputs.size(); j++) {
    const Tensor& x = harness.inputs[j];
    in.push_back(ct.prepare_input(j, halide_view(x.dtype(), const_cast<uint8_t*>(x.raw()), x.shape())));
  }
  const Tensor& ref = harness.reference;
  Tensor out(ref.dtype(), ref.shape());
  if (out.dtype() == DType::F32)  // an element the program never writes then shows up as NaN
    std::fill(out.data<float>(), out.data<float>() + out.numel(),
              std::numeric_limits<float>::quiet_NaN());
  Halide::Buffer<> ob = halide_view(out.dtype(), out.raw(), out.shape());
  ct.run(in, ob);
  double violation = max_rel_violation(out, ref, o.atol, o.rtol);
  if (!(violation <= 1.0)) return "wrong " + fmt(compile_s) + " " + fmt(violation);

  TimingOptions timing = o.timing;
  Halide::Buffer<uint8_t> scratch, lines;
  std::vector<const Halide::Buffer<>*> activations;  // the "in*" inputs (weights are "w*")
  if (o.model_cache) {
    scratch = Halide::Buffer<uint8_t>((int)std::max<int64_t>(o.flush_bytes, 64));
    scratch.fill(0);
    lines = Halide::Buffer<uint8_t>((int)(scratch.width() / 64));
    for (size_t j = 0; j < in.size(); j++)
      if (harness.sub.graph.value(harness.sub.graph.inputs[j]).name.rfind("in", 0) == 0)
        activations.push_back(&in[j]);
    timing.before_sample = [&] {
      FlushPipeline& f = flush_pipeline();
      f.scratch.set(scratch);
      f.pipeline.realize(lines);
      for (const Halide::Buffer<>* a : activations) touch(a->data(), (int64_t)a->size_in_bytes());
    };
  }
  TimingStats st = time_function([&] { ct.run(in, ob); }, timing);
  std::string s = "ok " + fmt(compile_s);
  for (double x : st.samples_s) s += " " + fmt(x);
  return s;
}

MeasureRecord record_for(const MeasureJob& job, const MeasureOptions& o, const WorkerResult& w) {
  const TaskHarness& harness = *job.harness;
  const Candidate& c = job.candidate;
  MeasureRecord r;
  r.task_key = harness.sub.key;
  r.task_kind = harness.sub.kind;
  r.workload = harness.workload;
  r.sentence = candidate_sentence(harness, c);
  r.hardware = harness.hardware_key;
  r.strategy = c.strategy;
  r.timestamp_ms = unix_time_ms();
  if (o.model_cache) r.cache = kCacheModel;
  ErrorKind kind = error_kind_for(w);
  if (w.status == WorkerStatus::Crash && w.phase == 1 && w.signal == SIGALRM) {
    r.error = error_field(ErrorKind::CompileTimeout);
    r.error_msg = "building took longer than " + fmt(compile_deadline(c, o)) + " s";
    return r;
  }
  if (kind != ErrorKind::None) {
    r.error = error_field(kind);
    r.error_msg = w.describe();
    return r;
  }
  std::istringstream is(w.payload);
  std::string tag;
  is >> tag >> r.compile_s;
  if (tag == "wrong") {
    double violation = 0;
    is >> violation;
    r.error = error_field(ErrorKind::WrongResult);
    r.error_msg = "output differs from the reference: max violation " + fmt(violation) +
                  " (1 = atol " + fmt(o.atol) + " + rtol " + fmt(o.rtol) + " * |ref|)";
    return r;
  }
  TLM_CHECK(tag == "ok") << "unexpected worker payload '" << w.payload.substr(0, 80) << "'";
  double x;
  while (is >> x) r.latencies_s.push_back(x);
  TLM_CHECK(!r.latencies_s.empty()) << "worker sent no timing samples";
  r.median_s = stats_from_samples(r.latencies_s).median_s;
  return r;
}

// One batch of at most P jobs, compiled together and run in turn.
void measure_batch(const MeasureJob* jobs, size_t n, const MeasureOptions& o,
                   std::vector<MeasureRecord>* out) {
  struct Slot {
    Turn turn;
    std::thread thread;
    std::atomic<bool> done{false};
    bool ready = false;
    WorkerResult result;
    std::exception_ptr failure;
  };
  std::vector<Slot> slots(n);
  const bool take_turns = n > 1;
  for (Slot& s : slots)
    if (take_turns) {
      TLM_CHECK(pipe2(s.turn.ready, O_CLOEXEC) == 0 && pipe2(s.turn.go, O_CLOEXEC) == 0)
          << "pipe2: " << std::strerror(errno);
      fcntl(s.turn.ready[0], F_SETFL, O_NONBLOCK);
    }
  for (size_t i = 0; i < n; i++) {
    Slot& s = slots[i];
    const MeasureJob& job = jobs[i];
    // Waiting for its turn is part of phase 1 for the worker: allow the runs before it.
    double backstop = compile_deadline(job.candidate, o) + (double)n * o.run_timeout_s + 10;
    s.thread = std::thread([&s, &job, &o, take_turns, backstop] {
      try {
        s.result = run_isolated_phases(
            [&](const EndPhase& end) {
              return measure_in_child(*job.harness, job.candidate, o,
                                      take_turns ? &s.turn : nullptr, end);
            },
            backstop, o.run_timeout_s);
      } catch (...) {
        s.failure = std::current_exception();
      }
      s.done = true;
    });
  }
  // Every child compiled (waiting) or finished; then their runs, one at a time.
  for (;;) {
    std::vector<pollfd> fds;
    for (Slot& s : slots)
      if (take_turns && !s.ready && !s.done) fds.push_back({s.turn.ready[0], POLLIN, 0});
    if (fds.empty()) break;
    poll(fds.data(), fds.size(), 20);
    for (Slot& s : slots) {
      char byte;
      if (take_turns && !s.ready && ::read(s.turn.ready[0], &byte, 1) == 1) s.ready = true;
    }
  }
  for (Slot& s : slots) {
    if (s.ready && !s.done) {
      char go = 'G';
      if (::write(s.turn.go[1], &go, 1) != 1) {
        // Cannot happen while we hold the read end; the worker's backstop would end it anyway.
      }
    }
    s.thread.join();
  }
  for (size_t i = 0; i < n; i++) {
    Slot& s = slots[i];
    for (int fd : {s.turn.ready[0], s.turn.ready[1], s.turn.go[0], s.turn.go[1]})
      if (fd >= 0) close(fd);
  }
  for (Slot& s : slots)
    if (s.failure) std::rethrow_exception(s.failure);
  for (size_t i = 0; i < n; i++) out->push_back(record_for(jobs[i], o, slots[i].result));
}

}  // namespace

std::vector<MeasureRecord> measure_candidates(const std::vector<MeasureJob>& jobs,
                                              const MeasureOptions& o) {
  std::vector<MeasureRecord> out;
  if (jobs.empty()) return out;
  for (const MeasureJob& j : jobs) {
    TLM_CHECK(j.harness) << "measure job without a harness";
    if (j.candidate.autoscheduled) load_halide_autoscheduler(j.candidate.autoscheduler);
  }
  if (o.model_cache) flush_pipeline();  // compiled here, before the children fork
  size_t p = (size_t)std::max(1, o.parallel_compiles > 0 ? o.parallel_compiles : compute_threads());
  for (size_t i = 0; i < jobs.size(); i += p)
    measure_batch(&jobs[i], std::min(p, jobs.size() - i), o, &out);
  return out;
}

MeasureRecord measure_candidate(const TaskHarness& harness, const Candidate& c,
                                const MeasureOptions& o) {
  return measure_candidates({MeasureJob{&harness, c}}, o).at(0);
}

}  // namespace tlm
