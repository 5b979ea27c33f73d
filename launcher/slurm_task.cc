#include "slurm_task.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <set>

#include "child_env.h"
#include "common/parse.h"
#include "common/secret.h"
#include "control/control_client.h"
#include "local_job.h"
#include "spawn.h"
#include "task_store.h"

namespace trainmover::launcher {
namespace {

constexpr int kExitStartFailed = 1;
constexpr int kExitJobStopped = 3;
// A standby still running this long after every slot finished is stopped
// (a promoted one that finished exits by itself well within it).
constexpr auto kStandbyLinger = std::chrono::seconds(2);
constexpr auto kReplyWait = std::chrono::seconds(10);

// The job as the srun side described it in the environment.
struct JobEnv {
  std::string control;
  std::string store;
  uint64_t job_id = 0;
  std::string secret_hex;
  int nslots = 0;
};

Result<std::string> required_env(const char* name) {
  auto v = get_env(name);
  if (!v || v->empty())
    return error(TM_ERROR_INVALID_ARGUMENT, name, " is not set (run under srun --trainmover)");
  return *v;
}

Result<JobEnv> job_env() {
  JobEnv job;
  TM_ASSIGN_OR_RETURN(job.control, required_env("TRAINMOVER_CONTROL"));
  TM_ASSIGN_OR_RETURN(job.secret_hex, required_env("TRAINMOVER_JOB_SECRET"));
  TM_ASSIGN_OR_RETURN(std::string id, required_env("TRAINMOVER_JOB_ID"));
  TM_ASSIGN_OR_RETURN(int64_t job_id, parse_int(id, 0, INT64_MAX));
  job.job_id = static_cast<uint64_t>(job_id);
  job.store = get_env("TRAINMOVER_STORE").value_or("");
  TM_ASSIGN_OR_RETURN(std::string n, required_env("TRAINMOVER_NSLOTS"));
  TM_ASSIGN_OR_RETURN(int64_t nslots, parse_int(n, 1, 4096));
  job.nslots = static_cast<int>(nslots);
  return job;
}

std::string node_name(const std::string& given) {
  if (!given.empty()) return given;
  if (auto n = get_env("SLURMD_NODENAME"); n && !n->empty()) return *n;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

Result<std::unique_ptr<control::ControlClient>> connect(const JobEnv& job) {
  TM_ASSIGN_OR_RETURN(JobSecret secret, JobSecret::from_hex(job.secret_hex));
  control::ControlClientOptions options;
  options.address = job.control;
  options.job_id = job.job_id;
  options.identity.kind = control::PeerKind::kLauncher;
  TM_ASSIGN_OR_RETURN(options.identity.process.instance_id, random_u64());
  options.identity.process.pid = getpid();
  return control::ControlClient::connect(options, secret);
}

// Sends the exit report, then waits for a status reply: the coordinator
// handles a connection's messages in order, so the reply means the report
// was handled. Returns whether the coordinator has stopped the job.
Result<bool> deliver_exit(control::ControlClient& client, const control::ExitReport& report) {
  TM_RETURN_IF_ERROR(client.send(report));
  TM_RETURN_IF_ERROR(client.send(control::StatusRequest{}));
  Deadline deadline = Deadline::after(kReplyWait);
  for (;;) {
    TM_ASSIGN_OR_RETURN(control::Message m, client.next(deadline.remaining()));
    if (auto* reply = std::get_if<control::StatusReply>(&m))
      return reply->status.contains("stopped") && !reply->status["stopped"].is_null();
  }
}

control::ExitReport exit_report(pid_t pid, int wstatus, const std::string& host) {
  control::ExitReport r;
  r.pid = pid;
  r.host = host;
  if (WIFEXITED(wstatus)) {
    r.exit_code = WEXITSTATUS(wstatus);
  } else {
    r.exit_code = -1;
    r.signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : SIGKILL;
  }
  return r;
}

int shell_status(int wstatus) {
  return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
}

// SIGINT and SIGTERM as data, to forward them to the child.
Result<UniqueFd> signal_fd() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) return system_error("sigprocmask", errno);
  int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) return system_error("signalfd", errno);
  return UniqueFd(fd);
}

// The launcher's watch over its child: what the coordinator says of the job.
class TaskWatch {
 public:
  TaskWatch(control::ControlClient& client, int nslots) : client_(client), nslots_(nslots) {}
  // Reads what came (no wait); sets job_done / stopped.
  void poll() {
    for (;;) {
      auto m = client_.next(Duration::zero());
      if (!m.ok()) {
        if (m.status().code() != TM_ERROR_TIMEOUT && !lost_) lost_ = m.status().message();
        return;
      }
      auto* e = std::get_if<control::EventMessage>(&m.value());
      if (e == nullptr) continue;
      const std::string name = e->event.value("event", "");
      if (name == "slot_finished") finished_.insert(e->event.value("slot", -1));
      if (name == "job_stopped") stopped_ = true;
      if (finished_.size() == static_cast<size_t>(nslots_) && !done_at_)
        done_at_ = Deadline::after(kStandbyLinger);
    }
  }
  bool stopped() const { return stopped_; }
  // Every slot finished a while ago: a child still running is a standby.
  bool job_done() const { return done_at_ && done_at_->expired(); }
  const std::optional<std::string>& lost() const { return lost_; }

 private:
  control::ControlClient& client_;
  const int nslots_;
  std::set<int> finished_;
  std::optional<Deadline> done_at_;
  bool stopped_ = false;
  std::optional<std::string> lost_;
};

void write_pid_file(pid_t child) {
  const std::string path = child_pid_file(getpid());
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;  // only slurm_spank_task_exit's fallback report needs it
  std::string text = std::to_string(child) + "\n";
  [[maybe_unused]] ssize_t n = write(fd, text.data(), text.size());
  close(fd);
}

struct Supervised {
  int wstatus = 0;
  bool stopped_by_us = false;  // a standby stopped at the job's end
  bool job_stopped = false;
};

// Waits for the child, forwarding signals and stopping a leftover standby.
// `stopping` is set before the child is signalled (its lifeline then tells
// nothing).
Supervised supervise(pid_t child, int signals, TaskWatch& watch, Duration kill_grace,
                     std::atomic<bool>& stopping) {
  Supervised s;
  std::optional<Deadline> kill_at;
  auto stop_child = [&] {
    if (kill_at) return;
    stopping = true;
    kill(-child, SIGTERM);
    kill_at = Deadline::after(kill_grace);
  };
  for (;;) {
    pid_t r = waitpid(child, &s.wstatus, WNOHANG);
    if (r == child) return s;
    signalfd_siginfo info;
    while (read(signals, &info, sizeof info) == sizeof info) {
      stopping = true;
      kill(-child, static_cast<int>(info.ssi_signo));
    }
    watch.poll();
    if (watch.job_done()) {
      s.stopped_by_us = true;
      stop_child();
    }
    if (watch.stopped()) s.job_stopped = true;
    if (watch.lost() && !kill_at) {
      std::fprintf(stderr, "trainmover-launch: the coordinator is lost (%s); stopping the task\n",
                   watch.lost()->c_str());
      stop_child();
    }
    if (kill_at && kill_at->expired()) kill(-child, SIGKILL);
    usleep(10000);
  }
}

}  // namespace

std::string child_pid_file(pid_t launcher_pid) {
  return str_cat(get_env("TMPDIR").value_or("/tmp"), "/trainmover-task.", launcher_pid, ".pid");
}

int run_slurm_task(const SlurmTaskOptions& options) {
  auto job = job_env();
  auto path = job.ok() ? resolve_program(options.argv.at(0)) : Result<std::string>(job.status());
  auto signals = signal_fd();
  if (!path.ok() || !signals.ok()) {
    std::fprintf(stderr, "trainmover-launch: %s\n",
                 (!path.ok() ? path.status() : signals.status()).message().c_str());
    return kExitStartFailed;
  }
  const std::string host = node_name(options.host);
  auto client = connect(*job);
  if (!client.ok()) {
    std::fprintf(stderr, "trainmover-launch: coordinator %s: %s\n", job->control.c_str(),
                 client.status().message().c_str());
    return kExitStartFailed;
  }
  (void)(*client)->send(control::Subscribe{true, true});
  EnvVars extra = {{"TRAINMOVER_HOST", host}, {"TRAINMOVER_CONTROL", job->control}};
  if (options.slot < 0) extra.emplace_back("TRAINMOVER_STANDBY", "1");
  extra.emplace_back("TRAINMOVER_PMIX_EVENTS", pmix_events_wanted() ? "1" : "0");
  // Under srun --mpi=pmix the program's first wire-up goes through PMIx.
  const std::string store = task_store_spec(job->store, pmix_wireup_wanted());
  // The child's death is reported at the start of its exit (before the
  // client goes: declared after it).
  std::atomic<bool> stopping{false};
  SpawnRequest request{
      *path, options.argv,
      child_environment(
          {std::max(options.slot, 0), job->nslots, job->job_id, job->secret_hex, store}, extra)};
  auto lifeline = add_lifeline(request);
  if (!lifeline.ok()) {
    std::fprintf(stderr, "trainmover-launch: %s\n", lifeline.status().message().c_str());
    return kExitStartFailed;
  }
  auto child = spawn_child(request);
  if (!child.ok()) {
    std::fprintf(stderr, "trainmover-launch: %s\n", child.status().message().c_str());
    return kExitStartFailed;
  }
  write_pid_file(child->pid);
  control::ControlClient& channel = **client;
  const pid_t child_pid = child->pid;
  auto watched = (*lifeline)->watch([&channel, &stopping, child_pid, host] {
    if (!stopping) (void)channel.send(control::ExitReport{child_pid, -1, 0, host, true});
  });
  if (!watched.ok()) std::fprintf(stderr, "trainmover-launch: %s\n", watched.message().c_str());
  TaskWatch watch(**client, job->nslots);
  Supervised s = supervise(child->pid, signals->get(), watch, options.kill_grace, stopping);
  lifeline->reset();  // its thread has ended with the child
  (void)unlink(child_pid_file(getpid()).c_str());
  if (s.job_stopped) return kExitJobStopped;
  if (s.stopped_by_us || (WIFEXITED(s.wstatus) && WEXITSTATUS(s.wstatus) == 0)) return 0;
  auto delivered = deliver_exit(**client, exit_report(child->pid, s.wstatus, host));
  // The child may have ended on the coordinator's stop order before its
  // event came: the status reply says so.
  if (delivered.ok()) return *delivered ? kExitJobStopped : 0;
  std::fprintf(stderr, "trainmover-launch: the exit of pid %d did not reach the coordinator: %s\n",
               child->pid, delivered.status().message().c_str());
  return shell_status(s.wstatus);
}

int report_task_exit(pid_t launcher_pid, int wait_status) {
  std::ifstream in(child_pid_file(launcher_pid));
  long child = 0;
  if (!(in >> child) || child <= 0) return 1;  // the launcher never started its child
  (void)unlink(child_pid_file(launcher_pid).c_str());
  auto job = job_env();
  if (!job.ok()) return 1;
  auto client = connect(*job);
  if (!client.ok()) return 1;
  // The launcher died, so its child died with it (PR_SET_PDEATHSIG): the
  // child is reported as killed, with the launcher's status for the log.
  control::ExitReport report;
  report.pid = static_cast<pid_t>(child);
  report.exit_code = -1;
  report.signal = SIGKILL;
  report.host = node_name("");
  std::fprintf(
      stderr,
      "trainmover-launch: task launcher %d ended (wait status %d); reporting its child %ld\n",
      launcher_pid, wait_status, child);
  return deliver_exit(**client, report).ok() ? 0 : 1;
}

}  // namespace trainmover::launcher
