#include "support/multiprocess.h"

#include "rendezvous/store_factory.h"
#include "transport/shm/local_socket.h"
#include "transport/tcp/socket.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace trainmover::testing {

std::string ChildExit::describe() const {
  if (timed_out) return "timed out (killed)";
  if (signal != 0) return str_cat("killed by signal ", signal);
  return str_cat("exit code ", code);
}

namespace {
JobSecret make_secret() {
  auto s = JobSecret::generate();
  if (!s.ok()) throw std::runtime_error(s.status().message());
  return s.value();
}
}  // namespace

namespace {
// The store process: serves until its parent goes away, reporting its
// address (or why it could not start) on `report_fd`.
[[noreturn]] void serve_store(const JobSecret& secret, uint64_t job_id, int report_fd, int fd_limit,
                              const std::string& host) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (fd_limit > 0 && !limit_fds(fd_limit)) _exit(1);
  auto server = rendezvous::start_store_server(host + ":0", secret, job_id);
  std::string report =
      server.ok() ? server.value()->address() : "error: " + server.status().message();
  report += "\n";
  if (write(report_fd, report.data(), report.size()) < 0 || !server.ok()) _exit(1);
  close(report_fd);
  while (true) pause();  // until SIGKILL from ~TestJob or the parent's death
}
}  // namespace

bool limit_fds(int limit) {
  rlimit r{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
  return setrlimit(RLIMIT_NOFILE, &r) == 0;
}

std::vector<UniqueFd> silent_connections(const std::string& address, int count) {
  std::vector<UniqueFd> fds;
  auto to = transport::tcp::resolve(address);
  if (!to.ok()) return fds;
  for (int i = 0; i < count; ++i) {
    auto fd = transport::tcp::start_connect(to.value());
    if (!fd.ok()) break;
    fds.push_back(std::move(fd).value());
  }
  return fds;
}

std::vector<UniqueFd> silent_local_connections(const std::string& name, int count) {
  std::vector<UniqueFd> fds;
  for (int i = 0; i < count; ++i) {
    auto fd = transport::shm::start_connect_local(name);
    if (!fd.ok()) break;
    fds.push_back(std::move(fd).value());
  }
  return fds;
}

TestJob::TestJob(int store_fd_limit, const std::string& store_host)
    : secret_(make_secret()), job_id_(random_u64().value() >> 1) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  std::fflush(nullptr);
  store_pid_ = fork();
  if (store_pid_ == 0) {
    close(fds[0]);
    serve_store(secret_, job_id_, fds[1], store_fd_limit, store_host);
  }
  close(fds[1]);
  std::string line;
  char c;
  while (read(fds[0], &c, 1) == 1 && c != '\n') line.push_back(c);
  close(fds[0]);
  if (line.empty() || line.rfind("error: ", 0) == 0) {
    throw std::runtime_error("test store did not start: " + line);
  }
  store_address_ = line;
}

TestJob::~TestJob() {
  if (store_pid_ > 0) {
    kill(store_pid_, SIGKILL);
    waitpid(store_pid_, nullptr, 0);
  }
}

CommConfig TestJob::config(int slot, int nslots, const std::string& name) const {
  CommConfig c;
  c.slot = slot;
  c.nslots = nslots;
  c.job_id = job_id_;
  c.job_secret = secret_.to_hex();
  c.store_address = store_address_;
  c.name = name;
  c.timeout_s = 10;
  c.connect_timeout_s = 20;
  c.heartbeat_interval_s = 0.1;
  // The transport of every test link: tcp unless the suite is run again
  // over another kind (tests/comm/shm_suite.sh).
  if (const char* kind = std::getenv("TRAINMOVER_TEST_TRANSPORT"); kind != nullptr && *kind != 0)
    c.transport = kind;
  return c;
}

pid_t fork_child(const std::function<int()>& body) {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int code = 99;
    try {
      code = body();
    } catch (...) {
      code = 98;
    }
    std::fflush(nullptr);
    _exit(code);
  }
  return pid;
}

std::vector<ChildExit> wait_children(const std::vector<pid_t>& pids, std::chrono::seconds timeout) {
  std::vector<ChildExit> exits(pids.size());
  std::vector<bool> done(pids.size(), false);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t left = pids.size();
  while (left > 0) {
    for (size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      int status = 0;
      pid_t r = waitpid(pids[i], &status, WNOHANG);
      if (r != pids[i]) continue;
      done[i] = true;
      --left;
      if (WIFEXITED(status)) exits[i].code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) exits[i].signal = WTERMSIG(status);
    }
    if (left == 0) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      for (size_t i = 0; i < pids.size(); ++i) {
        if (done[i]) continue;
        kill(pids[i], SIGKILL);
        waitpid(pids[i], nullptr, 0);
        exits[i].timed_out = true;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return exits;
}

std::vector<ChildExit> TestJob::run(int nslots, const std::function<int(int)>& body,
                                    std::chrono::seconds timeout) const {
  std::vector<pid_t> pids;
  for (int slot = 0; slot < nslots; ++slot)
    pids.push_back(fork_child([&body, slot] { return body(slot); }));
  return wait_children(pids, timeout);
}

}  // namespace trainmover::testing
