// Forked workers: results, exceptions, crashes, timeouts (one and two phases), big payloads, and
// no leaked descriptors, zombies, stray grandchildren, atexit handlers or stdio flushes.
#include "measure/worker.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/error.h"

namespace tlm {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int open_fd_count() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  EXPECT_NE(d, nullptr);
  while (readdir(d)) n++;
  closedir(d);
  return n;
}

// True when this process has no children left, reaped or not.
bool no_children() { return waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD; }

[[noreturn]] void spin_forever() {
  volatile uint64_t x = 0;
  while (true) x = x + 1;
}

TEST(Worker, OkPayload) {
  WorkerResult r = run_isolated([] { return std::string("hello from the child"); }, 10);
  EXPECT_EQ(r.status, WorkerStatus::Ok);
  EXPECT_EQ(r.payload, "hello from the child");
  EXPECT_EQ(r.phase, 1);
  EXPECT_EQ(error_kind_for(r), ErrorKind::None);
  EXPECT_EQ(run_isolated([] { return std::string(); }, 10).status, WorkerStatus::Ok);
  // The child really is another process.
  pid_t me = getpid();
  WorkerResult other = run_isolated([] { return std::to_string(getpid()); }, 10);
  EXPECT_NE(other.payload, std::to_string(me));
  EXPECT_TRUE(no_children());
}

TEST(Worker, ExceptionBecomesError) {
  WorkerResult r =
      run_isolated([]() -> std::string { throw std::runtime_error("bad tile 17 for i"); }, 10);
  EXPECT_EQ(r.status, WorkerStatus::Error);
  EXPECT_EQ(r.payload, "bad tile 17 for i");
  EXPECT_EQ(error_kind_for(r), ErrorKind::CompileError);
  EXPECT_EQ(r.describe(), "error: bad tile 17 for i");

  r = run_isolated([]() -> std::string { TLM_USER_ERROR() << "no such axis 'k'"; }, 10);
  EXPECT_EQ(r.status, WorkerStatus::Error);
  EXPECT_EQ(r.payload, "no such axis 'k'");

  r = run_isolated([]() -> std::string { throw 42; }, 10);
  EXPECT_EQ(r.status, WorkerStatus::Error);
  EXPECT_NE(r.payload.find("unknown exception"), std::string::npos);
}

TEST(Worker, CrashesReportTheSignalOrExitCode) {
  WorkerResult r = run_isolated([]() -> std::string { std::abort(); }, 10);
  EXPECT_EQ(r.status, WorkerStatus::Crash);
  EXPECT_EQ(r.signal, SIGABRT);
  EXPECT_EQ(error_kind_for(r), ErrorKind::Crash);

  r = run_isolated(
      []() -> std::string {
        volatile uintptr_t address = 8;  // opaque to the compiler: a real invalid access
        *(volatile int*)address = 1;
        return "unreachable";
      },
      10);
  EXPECT_EQ(r.status, WorkerStatus::Crash);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_NE(r.describe().find("signal 11"), std::string::npos) << r.describe();

  r = run_isolated([]() -> std::string { _exit(7); }, 10);
  EXPECT_EQ(r.status, WorkerStatus::Crash);
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.describe(), "crashed: exited with status 7 without a result");
  EXPECT_TRUE(no_children());
}

TEST(Worker, InfiniteLoopTimesOut) {
  auto t0 = std::chrono::steady_clock::now();
  WorkerResult r = run_isolated([]() -> std::string { spin_forever(); }, 0.5);
  double waited = seconds_since(t0);
  EXPECT_EQ(r.status, WorkerStatus::Timeout);
  EXPECT_EQ(error_kind_for(r), ErrorKind::CompileTimeout);  // one phase counts as phase 1
  EXPECT_GE(waited, 0.5);
  EXPECT_LT(waited, 1.0);  // the deadline is enforced, not merely noticed later
  EXPECT_TRUE(no_children());
}

TEST(Worker, LargePayloadRoundTrip) {
  std::string big(10 << 20, '\0');
  for (size_t i = 0; i < big.size(); i++) big[i] = (char)((i * 2654435761u) >> 13);
  WorkerResult r = run_isolated([&] { return big; }, 60);
  ASSERT_EQ(r.status, WorkerStatus::Ok);
  EXPECT_EQ(r.payload.size(), big.size());
  EXPECT_TRUE(r.payload == big);
}

TEST(Worker, ManyCallsLeakNothing) {
  run_isolated([] { return std::string("warm"); }, 10);  // lazy allocations happen here once
  int fds_before = open_fd_count();
  for (int i = 0; i < 200; i++) {
    WorkerResult r;
    switch (i % 4) {
      case 0:
        r = run_isolated([] { return std::string("ok"); }, 10);
        break;
      case 1:
        r = run_isolated([]() -> std::string { throw std::runtime_error("x"); }, 10);
        break;
      case 2:
        r = run_isolated([]() -> std::string { std::abort(); }, 10);
        break;
      case 3:
        r = run_isolated([]() -> std::string { spin_forever(); }, 0.01);
        break;
    }
    WorkerStatus want[] = {WorkerStatus::Ok, WorkerStatus::Error, WorkerStatus::Crash,
                           WorkerStatus::Timeout};
    ASSERT_EQ(r.status, want[i % 4]) << "call " << i << ": " << r.describe();
  }
  EXPECT_EQ(open_fd_count(), fds_before);
  EXPECT_TRUE(no_children());
}

TEST(Worker, GrandchildrenDoNotOutliveTheCall) {
  auto t0 = std::chrono::steady_clock::now();
  // fn leaves a grandchild that would hold the result pipe open forever.
  WorkerResult r = run_isolated(
      [] {
        pid_t g = fork();
        if (g == 0) {
          while (true) pause();
        }
        return std::to_string(g);
      },
      30);
  ASSERT_EQ(r.status, WorkerStatus::Ok);
  EXPECT_LT(seconds_since(t0), 10.0);  // did not wait for the grandchild's end of the pipe
  pid_t g = (pid_t)std::stol(r.payload);
  // It was SIGKILLed with the child's process group; init reaps it soon after.
  bool gone = false;
  for (int i = 0; i < 500 && !gone; i++) {
    std::ifstream stat("/proc/" + std::to_string(g) + "/stat");
    std::string text;
    std::getline(stat, text);
    size_t close_paren = text.rfind(')');
    gone = !stat || (close_paren != std::string::npos && text[close_paren + 2] == 'Z');
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "grandchild " << g << " still running";
}

int g_atexit_fd = -1;
pid_t g_main_pid = 0;
void report_atexit_in_child() {
  if (getpid() != g_main_pid && g_atexit_fd >= 0) {
    if (write(g_atexit_fd, "X", 1) != 1) _exit(99);
  }
}

TEST(Worker, ChildNeverRunsAtexitOrFlushesParentStdio) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  g_main_pid = getpid();
  g_atexit_fd = fds[1];
  static bool registered = (std::atexit(report_atexit_in_child) == 0);
  ASSERT_TRUE(registered);

  std::string path = ::testing::TempDir() + "tlm_worker_stdio_" + std::to_string(getpid());
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("parent;", f);  // still in the parent's buffer at fork time
  EXPECT_EQ(run_isolated(
                [&] {
                  std::fputs("child;", f);  // in the child's copy of the buffer only
                  return std::string("ok");
                },
                10)
                .status,
            WorkerStatus::Ok);
  EXPECT_EQ(run_isolated([]() -> std::string { throw std::runtime_error("e"); }, 10).status,
            WorkerStatus::Error);
  std::fclose(f);
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "parent;");  // written once, by the parent; the child's bytes died with it
  std::remove(path.c_str());

  g_atexit_fd = -1;
  close(fds[1]);
  char c;
  EXPECT_EQ(read(fds[0], &c, 1), 0) << "a child ran the parent's atexit handlers";
  close(fds[0]);
}

TEST(Worker, TwoPhasesHaveTheirOwnDeadlines) {
  // Phase 1 takes longer than phase 2 may: the second clock starts at end_phase1().
  WorkerResult r = run_isolated_phases(
      [](const EndPhase& end_phase1) {
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
        end_phase1();
        end_phase1();  // a second call is harmless
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return std::string("measured");
      },
      30, 0.3);
  EXPECT_EQ(r.status, WorkerStatus::Ok) << r.describe();
  EXPECT_EQ(r.payload, "measured");
  EXPECT_EQ(r.phase, 2);

  auto t0 = std::chrono::steady_clock::now();
  r = run_isolated_phases(
      [](const EndPhase& end_phase1) -> std::string {
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
        end_phase1();
        spin_forever();
      },
      30, 0.3);
  double waited = seconds_since(t0);
  EXPECT_EQ(r.status, WorkerStatus::Timeout);
  EXPECT_EQ(r.phase, 2);
  EXPECT_EQ(error_kind_for(r), ErrorKind::RunTimeout);
  EXPECT_GE(waited, 0.7);
  EXPECT_NE(r.describe().find("timed out in phase 2"), std::string::npos) << r.describe();

  r = run_isolated_phases([](const EndPhase&) -> std::string { spin_forever(); }, 0.3, 30);
  EXPECT_EQ(r.status, WorkerStatus::Timeout);
  EXPECT_EQ(r.phase, 1);
  EXPECT_EQ(error_kind_for(r), ErrorKind::CompileTimeout);

  r = run_isolated_phases(
      [](const EndPhase& end_phase1) -> std::string {
        end_phase1();
        throw std::runtime_error("bounds check failed");
      },
      30, 30);
  EXPECT_EQ(r.status, WorkerStatus::Error);
  EXPECT_EQ(error_kind_for(r), ErrorKind::RuntimeError);
  EXPECT_EQ(r.describe(), "error in phase 2: bounds check failed");

  r = run_isolated_phases(
      [](const EndPhase&) -> std::string { throw std::runtime_error("no such axis"); }, 30, 30);
  EXPECT_EQ(error_kind_for(r), ErrorKind::CompileError);

  r = run_isolated_phases(
      [](const EndPhase& end_phase1) -> std::string {
        end_phase1();
        std::abort();
      },
      30, 30);
  EXPECT_EQ(r.status, WorkerStatus::Crash);
  EXPECT_EQ(r.phase, 2);
  EXPECT_EQ(error_kind_for(r), ErrorKind::Crash);
  EXPECT_TRUE(no_children());
}

}  // namespace
}  // namespace tlm
