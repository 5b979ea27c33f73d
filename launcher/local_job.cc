#include "local_job.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "child_env.h"
#include "common/parse.h"
#include "common/secret.h"
#include "rendezvous/tcp_store_server.h"
#include "spawn.h"

namespace trainmover::launcher {
namespace {

// Output beyond this per rank is dropped, so a chatty rank cannot exhaust our memory.
constexpr size_t kMaxCapturedBytes = 64u << 20;
// How often the supervisor looks for exited ranks when nothing else wakes it.
constexpr int kTickMs = 10;
// After the last rank exits, how long its output pipe may stay open (a
// grandchild may hold it) before we stop reading.
constexpr double kDrainSeconds = 2.0;

struct Rank {
  RankResult result;
  UniqueFd out;
  bool running = true;
  bool truncated = false;
  std::unique_ptr<control::LifelineWatch> lifeline;  // with on_dying
};

// What every process of the job is started with.
struct Launch {
  std::string path;
  uint64_t job_id = 0;
  std::string secret_hex;
  std::string store_address;
  EnvVars env;
  // Set before the job signals its own processes: their lifelines then tell
  // nothing (on_dying is for exits nobody chose).
  std::shared_ptr<std::atomic<bool>> stopping = std::make_shared<std::atomic<bool>>(false);
};

// Starts process `index` of the job: an active rank (index < nprocs) or a
// standby.
Result<Rank> start_process(const LocalJobOptions& options, const Launch& launch, int index) {
  const bool standby = index >= options.nprocs;
  EnvVars env = launch.env;
  if (standby) env.emplace_back("TRAINMOVER_STANDBY", "1");
  SpawnRequest request{launch.path, options.argv,
                       child_environment({standby ? 0 : index, options.nprocs, launch.job_id,
                                          launch.secret_hex, launch.store_address},
                                         env),
                       options.capture_stdout};
  request.die_with_parent = std::none_of(
      env.begin(), env.end(), [](const auto& e) { return e.first == "TRAINMOVER_CONTROL"; });
  Rank rank;
  if (options.on_dying) {
    TM_ASSIGN_OR_RETURN(rank.lifeline, add_lifeline(request));
  }
  TM_ASSIGN_OR_RETURN(SpawnedChild child, spawn_child(request));
  rank.result.rank = index;
  rank.result.pid = child.pid;
  rank.out = std::move(child.stdout_reader);
  if (rank.lifeline) {
    TM_RETURN_IF_ERROR(rank.lifeline->watch(
        [on_dying = options.on_dying, stopping = launch.stopping, pid = child.pid] {
          if (!*stopping) on_dying(pid);
        }));
  }
  return rank;
}

class Supervisor {
 public:
  Supervisor(const LocalJobOptions& options, const Launch& launch, std::vector<Rank>& ranks)
      : options_(options),
        launch_(launch),
        ranks_(ranks),
        deadline_(Deadline::after(options.timeout)),
        standbys_started_(options.standbys_on_failure ? 0 : options.standbys) {}

  LocalJobResult run();

 private:
  bool any_running() const {
    return std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.running; });
  }
  bool any_output_open() const {
    return std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.out.valid(); });
  }
  void wait_for_events(Deadline drain);
  void read_output(Rank& rank);
  void read_forwarded_signals();
  void reap();
  // Runtime mode: a process that failed after it finished training.
  bool finished_training(const RankResult& rank) const;
  void signal_running(int sig);
  void begin_stop(int sig);
  void check_runtime();
  void start_cold_standbys(int count);

  const LocalJobOptions& options_;
  const Launch& launch_;
  std::vector<Rank>& ranks_;
  Deadline deadline_;
  int standbys_started_;
  bool stopping_ = false;
  bool killed_ = false;
  Deadline kill_at_ = Deadline::never();
  Deadline tick_ = Deadline::after(seconds(1));
  LocalJobResult result_;
};

void Supervisor::signal_running(int sig) {
  *launch_.stopping = true;
  for (Rank& rank : ranks_) {
    if (!rank.running) continue;
    rank.result.stopped_by_job = true;
    kill(-rank.result.pid, sig);  // the rank's process group: it and what it started
  }
}

void Supervisor::begin_stop(int sig) {
  signal_running(sig);
  if (!stopping_) {
    stopping_ = true;
    kill_at_ = Deadline::after(options_.kill_grace);
  }
}

void Supervisor::read_output(Rank& rank) {
  char buffer[65536];
  for (;;) {
    ssize_t n = read(rank.out.get(), buffer, sizeof buffer);
    if (n > 0) {
      size_t room = kMaxCapturedBytes - std::min(kMaxCapturedBytes, rank.result.output.size());
      rank.result.output.append(buffer, std::min(room, static_cast<size_t>(n)));
      rank.truncated |= static_cast<size_t>(n) > room;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    rank.out.reset();  // EOF or a read error: nothing more will come
    return;
  }
}

void Supervisor::read_forwarded_signals() {
  signalfd_siginfo info;
  while (read(options_.forward_signals_fd, &info, sizeof info) == sizeof info) {
    int sig = static_cast<int>(info.ssi_signo);
    if (result_.forwarded_signal == 0) result_.forwarded_signal = sig;
    begin_stop(sig);
  }
}

void Supervisor::wait_for_events(Deadline drain) {
  std::vector<pollfd> fds;
  std::vector<Rank*> owners;
  for (Rank& rank : ranks_) {
    if (!rank.out.valid()) continue;
    fds.push_back({rank.out.get(), POLLIN, 0});
    owners.push_back(&rank);
  }
  if (options_.forward_signals_fd >= 0) fds.push_back({options_.forward_signals_fd, POLLIN, 0});
  int timeout_ms = std::min(
      {kTickMs, deadline_.poll_timeout_ms(), kill_at_.poll_timeout_ms(), drain.poll_timeout_ms()});
  int ready = poll(fds.data(), fds.size(), timeout_ms);
  if (ready <= 0) return;  // timeout, or EINTR: the loop re-checks everything
  for (size_t i = 0; i < owners.size(); ++i) {
    if (fds[i].revents != 0) read_output(*owners[i]);
  }
  if (options_.forward_signals_fd >= 0 && fds.back().revents != 0) read_forwarded_signals();
}

// Cold standbys (standbys_on_failure): started only now, after failures.
// One that cannot start is reported and left out: the coordinator waits for
// a standby (--standby-wait) and stops the job if none comes.
void Supervisor::start_cold_standbys(int count) {
  for (; count > 0 && standbys_started_ < options_.standbys && !stopping_; --count) {
    const int index = options_.nprocs + standbys_started_++;
    auto rank = start_process(options_, launch_, index);
    if (!rank.ok()) {
      std::fprintf(stderr, "trainmover-launch: starting standby process %d: %s\n", index,
                   rank.status().message().c_str());
      continue;
    }
    ranks_.push_back(std::move(*rank));
  }
}

void Supervisor::reap() {
  int failures = 0;
  for (Rank& rank : ranks_) {
    if (!rank.running) continue;
    int wstatus = 0;
    pid_t r = waitpid(rank.result.pid, &wstatus, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR)) continue;
    rank.running = false;
    rank.lifeline.reset();  // its thread has ended: the dead holder let go
    if (r > 0 && WIFEXITED(wstatus)) {
      rank.result.exited = true;
      rank.result.exit_code = WEXITSTATUS(wstatus);
    } else if (r > 0 && WIFSIGNALED(wstatus)) {
      rank.result.term_signal = WTERMSIG(wstatus);
    }
    if (options_.on_exit) {
      options_.on_exit(rank.result.pid, rank.result.exited ? rank.result.exit_code : -1,
                       rank.result.term_signal);
    }
    bool finished = rank.result.succeeded() || finished_training(rank.result);
    if (finished) ++result_.finished;
    bool failed = !finished && !rank.result.stopped_by_job;
    if (failed && result_.first_failed_rank < 0) result_.first_failed_rank = rank.result.rank;
    if (failed) ++failures;
    if (failed && !options_.recover_failures) begin_stop(SIGTERM);
    // Runtime mode: N successes end the job; the standbys left are stopped.
    if (options_.recover_failures && result_.finished >= options_.nprocs && !stopping_)
      begin_stop(SIGTERM);
  }
  if (options_.recover_failures) start_cold_standbys(failures);
}

bool Supervisor::finished_training(const RankResult& rank) const {
  return options_.recover_failures && !rank.succeeded() && options_.finished_training &&
         options_.finished_training(rank.pid);
}

void Supervisor::check_runtime() {
  if (stopping_) return;
  if (options_.stop_reason) {
    if (auto reason = options_.stop_reason()) {
      result_.stopped = reason;
      begin_stop(SIGTERM);
      return;
    }
  }
  if (options_.on_tick && tick_.expired()) {
    options_.on_tick();
    tick_ = Deadline::after(seconds(1));
  }
}

LocalJobResult Supervisor::run() {
  Deadline drain = Deadline::never();
  while (any_running() || (any_output_open() && !drain.expired())) {
    wait_for_events(drain);
    reap();
    check_runtime();
    if (any_running() && deadline_.expired() && !stopping_) {
      result_.timed_out = true;
      begin_stop(SIGTERM);
    }
    if (stopping_ && !killed_ && kill_at_.expired()) {
      killed_ = true;
      signal_running(SIGKILL);
    }
    if (!any_running() && drain.at() == Clock::time_point::max()) {
      drain = Deadline::after(seconds(kDrainSeconds));
    }
  }
  for (Rank& rank : ranks_) {
    if (rank.truncated) rank.result.output += "\n[trainmover: output truncated]\n";
    result_.ranks.push_back(std::move(rank.result));
  }
  return std::move(result_);
}

Status check_options(const LocalJobOptions& options) {
  if (options.argv.empty()) return error(TM_ERROR_INVALID_ARGUMENT, "local job: no program given");
  if (options.nprocs < 1 || options.nprocs > 4096) {
    return error(TM_ERROR_INVALID_ARGUMENT, "local job: nprocs ", options.nprocs,
                 " is not in [1, 4096]");
  }
  if (options.standbys < 0 || options.standbys > 4096) {
    return error(TM_ERROR_INVALID_ARGUMENT, "local job: standbys ", options.standbys,
                 " is not in [0, 4096]");
  }
  if (options.timeout <= Duration::zero()) {
    return error(TM_ERROR_INVALID_ARGUMENT, "local job: timeout must be positive");
  }
  return Status::Ok();
}

}  // namespace

std::string RankResult::describe() const {
  if (exited) return str_cat("rank ", rank, " exited with status ", exit_code);
  if (term_signal != 0) {
    return str_cat("rank ", rank, " was killed by signal ", term_signal, " (",
                   strsignal(term_signal), ")");
  }
  return str_cat("rank ", rank, " ended in an unknown way");
}

Result<std::string> resolve_program(const std::string& program) {
  if (program.empty()) return error(TM_ERROR_INVALID_ARGUMENT, "empty program name");
  auto executable = [](const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos) {
    if (executable(program)) return program;
    return error(TM_ERROR_INVALID_ARGUMENT, "program ", program, " is not an executable file");
  }
  std::string path = get_env("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  for (std::string_view dir : split(path, ':')) {
    std::string candidate = str_cat(dir.empty() ? "." : dir, "/", program);
    if (executable(candidate)) return candidate;
  }
  return error(TM_ERROR_INVALID_ARGUMENT, "program ", program, " not found in PATH");
}

Result<LocalJobResult> run_local_job(const LocalJobOptions& options) {
  TM_RETURN_IF_ERROR(check_options(options));
  TM_ASSIGN_OR_RETURN(std::string path, resolve_program(options.argv[0]));
  TM_ASSIGN_OR_RETURN(JobSecret secret, JobSecret::generate());
  TM_ASSIGN_OR_RETURN(uint64_t job_id, random_u64());
  job_id >>= 1;  // keep it printable as a positive signed number too
  TM_ASSIGN_OR_RETURN(auto store, rendezvous::TcpStoreServer::start("127.0.0.1:0", secret, job_id));
  Launch launch{path, job_id, secret.to_hex(), store->address(), options.extra_env};
  if (options.prepare_job) {
    TM_ASSIGN_OR_RETURN(EnvVars more, options.prepare_job(secret, job_id));
    launch.env.insert(launch.env.end(), more.begin(), more.end());
  }

  const int total = options.nprocs + (options.standbys_on_failure ? 0 : options.standbys);
  std::vector<Rank> ranks;
  ranks.reserve(static_cast<size_t>(options.nprocs + options.standbys));
  for (int i = 0; i < total; ++i) {
    auto rank = start_process(options, launch, i);
    if (!rank.ok()) {
      for (Rank& started : ranks) kill_and_reap(started.result.pid, Duration::zero());
      return rank.status().with_context(str_cat("starting rank ", i));
    }
    ranks.push_back(std::move(*rank));
  }
  return Supervisor(options, launch, ranks).run();
}

}  // namespace trainmover::launcher
