#include "spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "common/str.h"

namespace trainmover::launcher {
namespace {

// argv/envp arrays for execve, built before fork (the child may not allocate).
std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

Result<std::pair<UniqueFd, UniqueFd>> make_pipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return system_error("pipe2", errno);
  return std::pair<UniqueFd, UniqueFd>(UniqueFd(fds[0]), UniqueFd(fds[1]));
}

// Runs in the forked child: only async-signal-safe calls until execve.
[[noreturn]] void exec_child(const char* path, char* const* argv, char* const* envp,
                             int stdout_writer, int error_writer, pid_t parent,
                             bool die_with_parent, const std::vector<int>& inherit_fds) {
  setpgid(0, 0);
  if (die_with_parent) prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // the parent died before prctl
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP}) sigaction(sig, &dfl, nullptr);
  if (stdout_writer >= 0 && dup2(stdout_writer, STDOUT_FILENO) < 0) {
    int err = errno;
    (void)!write(error_writer, &err, sizeof err);
    _exit(127);
  }
  for (int fd : inherit_fds) {  // a plain loop over a vector built before fork
    if (fcntl(fd, F_SETFD, 0) != 0) {
      int err = errno;
      (void)!write(error_writer, &err, sizeof err);
      _exit(127);
    }
  }
  execve(path, argv, envp);
  int err = errno;
  (void)!write(error_writer, &err, sizeof err);
  _exit(127);
}

// Waits (bounded) for the exec-status pipe: EOF means execve succeeded.
Status read_exec_status(int error_reader, const std::string& path) {
  pollfd pfd{error_reader, POLLIN, 0};
  int ready = poll(&pfd, 1, 10'000);
  if (ready < 0) return system_error("poll on exec status pipe", errno);
  if (ready == 0) return error(TM_ERROR_TIMEOUT, "child did not exec ", path, " within 10 s");
  int child_errno = 0;
  ssize_t n = read(error_reader, &child_errno, sizeof child_errno);
  if (n == 0) return Status::Ok();
  if (n != static_cast<ssize_t>(sizeof child_errno))
    return error(TM_ERROR_SYSTEM, "exec status pipe: short read");
  return error(TM_ERROR_SYSTEM, "cannot execute ", path, ": ", std::strerror(child_errno));
}

}  // namespace

Result<std::unique_ptr<control::LifelineWatch>> add_lifeline(SpawnRequest& request) {
  TM_ASSIGN_OR_RETURN(auto lifeline, control::LifelineWatch::create());
  request.env.push_back(str_cat(control::kLifelineFdEnv, "=", lifeline->fd()));
  request.inherit_fds.push_back(lifeline->fd());
  return lifeline;
}

Result<SpawnedChild> spawn_child(const SpawnRequest& request) {
  if (request.argv.empty()) return error(TM_ERROR_INVALID_ARGUMENT, "spawn: empty argv");
  auto argv = c_strings(request.argv);
  auto envp = c_strings(request.env);
  TM_ASSIGN_OR_RETURN(auto error_pipe, make_pipe());
  std::pair<UniqueFd, UniqueFd> out_pipe;
  if (request.capture_stdout) {
    TM_ASSIGN_OR_RETURN(out_pipe, make_pipe());
    // Only our end is non-blocking; the child's stdout stays blocking.
    int flags = fcntl(out_pipe.first.get(), F_GETFL);
    if (flags < 0 || fcntl(out_pipe.first.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
      return system_error("fcntl O_NONBLOCK on stdout pipe", errno);
    }
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return system_error("fork", errno);
  if (pid == 0) {
    exec_child(request.path.c_str(), argv.data(), envp.data(),
               request.capture_stdout ? out_pipe.second.get() : -1, error_pipe.second.get(), parent,
               request.die_with_parent, request.inherit_fds);
  }
  setpgid(pid, pid);  // also done by the child; whichever runs first wins the race
  error_pipe.second.reset();
  out_pipe.second.reset();
  if (Status s = read_exec_status(error_pipe.first.get(), request.path); !s.ok()) {
    kill_and_reap(pid, seconds(1));
    return s;
  }
  SpawnedChild child;
  child.pid = pid;
  child.stdout_reader = std::move(out_pipe.first);
  return child;
}

void kill_and_reap(pid_t pid, Duration limit) {
  Deadline deadline = Deadline::after(limit);
  while (!deadline.expired()) {
    pid_t r = waitpid(pid, nullptr, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  // SIGKILL cannot be ignored, so this wait is short; it is still bounded.
  Deadline hard = Deadline::after(seconds(5));
  while (!hard.expired()) {
    pid_t r = waitpid(pid, nullptr, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace trainmover::launcher
