#include "run_io.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>

#include "common/parse.h"

namespace trainmover::bench {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string program_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = getenv("PATH");
  for (std::string_view dir : split(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    std::string candidate = str_cat(dir, "/", program);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return program;
}

Result<Launched> launch(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return system_error("pipe2", errno);
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return system_error("fork", errno);
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(write_end.get(), 1);
    dup2(write_end.get(), 2);
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    execv(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, pid);
  write_end.reset();
  if (fcntl(read_end.get(), F_SETFL, O_NONBLOCK) != 0) return system_error("fcntl", errno);
  return Launched{pid, std::move(read_end)};
}

Result<std::vector<Json>> read_events(const std::string& path) {
  std::vector<Json> events;
  std::ifstream in(path);
  if (!in) return error(TM_ERROR_NOT_FOUND, "no event log at ", path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    TM_ASSIGN_OR_RETURN(Json e, parse_json_object(line));
    events.push_back(std::move(e));
  }
  return events;
}

std::optional<Json> find_event(const std::vector<Json>& events, const std::string& name,
                               int restart) {
  for (const Json& e : events) {
    if (e.value("event", std::string()) != name) continue;
    if (restart >= 0 && e.value("restart", -1) != restart) continue;
    return e;
  }
  return std::nullopt;
}

Status hand_lines(std::string& partial, std::string_view chunk, double now,
                  const LineHandler& on_line) {
  partial.append(chunk);
  Status failure;
  for (size_t nl; (nl = partial.find('\n')) != std::string::npos;) {
    Status st = on_line(partial.substr(0, nl), now);
    if (failure.ok()) failure = st;
    partial.erase(0, nl + 1);
  }
  return failure;
}

Result<int> read_lines_until_exit(Launched& run, Deadline deadline, double timeout_s,
                                  const LineHandler& on_line) {
  std::string partial;
  char buffer[65536];
  while (run.out.valid()) {
    if (deadline.expired())
      return error(TM_ERROR_TIMEOUT, "the run took longer than ", timeout_s, " s");
    pollfd p{run.out.get(), POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t n = read(run.out.get(), buffer, sizeof buffer);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) break;
    TM_RETURN_IF_ERROR(
        hand_lines(partial, std::string_view(buffer, static_cast<size_t>(n)), unix_now(), on_line));
  }
  int status = 0;
  while (waitpid(run.pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.pid = -1;
  return status;
}

}  // namespace trainmover::bench
