// Forked workers with deadlines: the child side (run fn, send frames, _exit) and the parent side
// (poll the pipe and the child, enforce the deadline, reap).
//
// Wire format, child -> parent: a sequence of frames, each a one-byte tag, then for 'O' (ok) and
// 'E' (error) an 8-byte little-endian length and that many bytes. 'P' (phase 1 done) has no body.
#include "measure/worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "support/clock.h"
#include "support/error.h"

namespace tlm {
namespace {

using Clock = SteadyClock;

constexpr char kTagOk = 'O', kTagError = 'E', kTagPhase = 'P';
// Exit status of a child that could not send its result (the parent went away or the pipe broke).
constexpr int kSendFailedExit = 120;

// Child side ----------------------------------------------------------------------------------

bool write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= (size_t)w;
  }
  return true;
}

bool send_frame(int fd, char tag, const std::string& body) {
  char header[9];
  header[0] = tag;
  uint64_t len = body.size();
  for (int i = 0; i < 8; i++) header[1 + i] = (char)((len >> (8 * i)) & 0xff);
  return write_all(fd, header, sizeof header) && write_all(fd, body.data(), body.size());
}

[[noreturn]] void child_main(int wfd, pid_t parent,
                             const std::function<std::string(const EndPhase&)>& fn) {
  // Our own process group, so a timeout also kills anything fn spawned; and die with the parent
  // instead of running on as an orphan.
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(kSendFailedExit);
  signal(SIGPIPE, SIG_IGN);  // a vanished parent shows up as a failed write, handled below

  bool phase1_done = false;
  EndPhase end_phase1 = [&] {
    if (phase1_done) return;
    phase1_done = true;
    if (!write_all(wfd, &kTagPhase, 1)) _exit(kSendFailedExit);
  };
  char tag = kTagOk;
  std::string body;
  try {
    body = fn(end_phase1);
  } catch (const std::exception& e) {
    tag = kTagError;
    body = e.what();
  } catch (...) {
    tag = kTagError;
    body = "unknown exception (not derived from std::exception)";
  }
  // _exit, never exit: the parent's atexit handlers and stdio buffers are not ours to run.
  _exit(send_frame(wfd, tag, body) ? 0 : kSendFailedExit);
}

// Parent side ---------------------------------------------------------------------------------

// Incrementally decodes the frames arriving from the child.
struct FrameDecoder {
  std::string buf;
  size_t pos = 0;
  bool phase_marker_seen = false;
  bool done = false;  // a final 'O' or 'E' frame is complete
  char tag = 0;
  std::string body;
  bool garbage = false;

  // Consumes what it can; returns true when a phase marker was consumed by this call.
  bool feed(const char* data, size_t n) {
    buf.append(data, n);
    bool marker = false;
    while (!done && !garbage && pos < buf.size()) {
      char t = buf[pos];
      if (t == kTagPhase) {
        pos++;
        marker = !phase_marker_seen;
        phase_marker_seen = true;
        continue;
      }
      if (t != kTagOk && t != kTagError) {
        garbage = true;  // fn wrote to our pipe itself; nothing after this can be trusted
        break;
      }
      if (buf.size() - pos < 9) break;
      uint64_t len = 0;
      for (int i = 0; i < 8; i++) len |= (uint64_t)(unsigned char)buf[pos + 1 + i] << (8 * i);
      if (buf.size() - pos - 9 < len) break;
      tag = t;
      body = buf.substr(pos + 9, len);
      done = true;
    }
    if (pos > 0 && !done) {
      buf.erase(0, pos);
      pos = 0;
    }
    return marker;
  }
};

int poll_ms(Clock::time_point deadline) {
  double ms = std::chrono::duration<double, std::milli>(deadline - Clock::now()).count();
  if (ms <= 0) return 0;
  return ms >= INT_MAX ? INT_MAX : (int)ms + 1;
}

Clock::time_point deadline_after(double seconds) {
  // Clamp absurd timeouts so the time_point arithmetic cannot overflow.
  double s = seconds < 1e7 ? seconds : 1e7;
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// Whether the child has ended, without reaping it: its pid (and so its process group id) stays
// reserved until we have killed the group, so the kill can never hit a recycled id.
bool has_exited(pid_t pid) {
  siginfo_t info;
  info.si_pid = 0;
  while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    if (errno != EINTR) return true;  // ECHILD: reaped elsewhere (SIGCHLD ignored)
  }
  return info.si_pid == pid;
}

// Reaps `pid`; -1 when it was already reaped elsewhere and its status is unknown.
int reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) != pid) {
    if (errno != EINTR) return -1;
  }
  return status;
}

WorkerResult run_child(const std::function<std::string(const EndPhase&)>& fn, int phases,
                       double timeout1_s, double timeout2_s) {
  TLM_CHECK(timeout1_s > 0 && timeout2_s > 0) << "timeouts " << timeout1_s << ", " << timeout2_s;
  int fds[2];
  TLM_CHECK(pipe2(fds, O_CLOEXEC) == 0) << "pipe2: " << std::strerror(errno);
  // A larger pipe means fewer wake-ups for big payloads; failure just keeps the default.
  fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);

  std::fflush(nullptr);  // otherwise pending parent output could be written again by the child
  Clock::time_point start = Clock::now();
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    TLM_INTERNAL_ERROR() << "fork: " << std::strerror(err);
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(fds[1], parent, fn);
  }
  setpgid(pid, pid);  // also here, so the group exists before we might need to kill it
  close(fds[1]);
  int rfd = fds[0];
  // pidfd (Linux 5.3+) becomes readable when the child exits, even while something else still
  // holds the pipe open; without it we look at the child every 10 ms.
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd >= 0) fcntl(pidfd, F_SETFD, FD_CLOEXEC);

  WorkerResult res;
  res.phases = phases;
  FrameDecoder dec;
  Clock::time_point deadline = deadline_after(timeout1_s);
  bool pipe_open = true, exited = false, timed_out = false;
  char chunk[1 << 16];
  auto drain = [&] {
    while (pipe_open && !dec.done) {
      ssize_t n = ::read(rfd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return;  // EAGAIN: nothing more for now
      if (n == 0) {
        pipe_open = false;
        return;
      }
      if (dec.feed(chunk, (size_t)n)) {
        res.phase = 2;
        deadline = deadline_after(timeout2_s);
      }
    }
  };
  while (!dec.done && !exited) {
    int wait_ms = poll_ms(deadline);
    if (wait_ms == 0) {
      timed_out = true;
      break;
    }
    if (pidfd < 0 && wait_ms > 10) wait_ms = 10;
    struct pollfd p[2] = {{pipe_open ? rfd : -1, POLLIN, 0}, {pidfd, POLLIN, 0}};
    if (poll(p, 2, wait_ms) < 0 && errno != EINTR) {
      TLM_INTERNAL_ERROR() << "poll: " << std::strerror(errno);
    }
    drain();
    if (!dec.done && (pidfd < 0 || (p[1].revents & POLLIN) || !pipe_open) && has_exited(pid)) {
      exited = true;
      drain();  // the last bytes it wrote before exiting
    }
  }

  // Take down the child (if still there) and anything it spawned, then reap it.
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  int status = reap(pid);
  close(rfd);
  if (pidfd >= 0) close(pidfd);
  res.elapsed_s = seconds_since(start);

  if (dec.done) {
    res.status = dec.tag == kTagOk ? WorkerStatus::Ok : WorkerStatus::Error;
    res.payload = std::move(dec.body);
  } else if (timed_out) {
    res.status = WorkerStatus::Timeout;
  } else {
    res.status = WorkerStatus::Crash;
    if (status != -1 && WIFSIGNALED(status)) {
      res.signal = WTERMSIG(status);
    } else if (status != -1 && WIFEXITED(status)) {
      res.exit_code = WEXITSTATUS(status);
    } else {
      res.exit_code = -1;  // reaped by someone else: how it ended is unknown
    }
  }
  return res;
}

}  // namespace

const char* worker_status_name(WorkerStatus s) {
  static const char* const names[] = {"Ok", "Timeout", "Crash", "Error"};
  int i = (int)s;
  TLM_CHECK(i >= 0 && i < 4) << "bad WorkerStatus " << i;
  return names[i];
}

std::string WorkerResult::describe() const {
  std::ostringstream os;
  std::string in_phase = phases == 1 ? "" : " in phase " + std::to_string(phase);
  switch (status) {
    case WorkerStatus::Ok:
      os << "ok after " << elapsed_s << " s";
      break;
    case WorkerStatus::Timeout:
      os << "timed out" << in_phase << " after " << elapsed_s << " s";
      break;
    case WorkerStatus::Error:
      os << "error" << in_phase << ": " << payload;
      break;
    case WorkerStatus::Crash:
      os << "crashed" << in_phase << ": ";
      if (signal != 0) {
        os << "signal " << signal << " (" << strsignal(signal) << ")";
      } else if (exit_code == kSendFailedExit) {
        os << "could not send its result (exit " << exit_code << ")";
      } else {
        os << "exited with status " << exit_code << " without a result";
      }
      break;
  }
  return os.str();
}

WorkerResult run_isolated(const std::function<std::string()>& fn, double timeout_s) {
  return run_child([&](const EndPhase&) { return fn(); }, 1, timeout_s, timeout_s);
}

WorkerResult run_isolated_phases(const std::function<std::string(const EndPhase&)>& fn,
                                 double phase1_timeout_s, double phase2_timeout_s) {
  return run_child(fn, 2, phase1_timeout_s, phase2_timeout_s);
}

ErrorKind error_kind_for(const WorkerResult& r) {
  bool compiling = r.phase == 1;
  switch (r.status) {
    case WorkerStatus::Ok:
      return ErrorKind::None;
    case WorkerStatus::Timeout:
      return compiling ? ErrorKind::CompileTimeout : ErrorKind::RunTimeout;
    case WorkerStatus::Error:
      return compiling ? ErrorKind::CompileError : ErrorKind::RuntimeError;
    case WorkerStatus::Crash:
      return ErrorKind::Crash;
  }
  TLM_INTERNAL_ERROR() << "bad WorkerStatus " << (int)r.status;
}

}  // namespace tlm
