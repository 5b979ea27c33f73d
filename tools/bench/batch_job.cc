#include "batch_job.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "common/parse.h"
#include "common/unique_fd.h"
#include "run_io.h"

namespace trainmover::bench {
namespace {

constexpr double kCommandTimeoutS = 30;  // one Slurm command (MessageTimeout is 10 s)
constexpr double kStateEveryS = 0.5;     // squeue while following the output

// Reads what was appended to `fd` since the last call into `partial` and
// hands each complete line on.
Status read_new_lines(int fd, std::string& partial, const LineHandler& on_line) {
  std::array<char, 65536> buffer;
  for (;;) {
    const ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error("read of the job's output", errno);
    if (n == 0) return Status::Ok();
    TM_RETURN_IF_ERROR(hand_lines(partial, std::string_view(buffer.data(), static_cast<size_t>(n)),
                                  unix_now(), on_line));
  }
}

}  // namespace

Result<std::string> slurm_command(const std::string& conf, std::vector<std::string> argv,
                                  std::vector<std::string> env) {
  argv[0] = program_path(argv[0]);
  env.push_back("SLURM_CONF=" + conf);
  TM_ASSIGN_OR_RETURN(Launched run, launch(argv, env));
  std::string output;
  auto status = read_lines_until_exit(run, Deadline::after(seconds(kCommandTimeoutS)),
                                      kCommandTimeoutS, [&output](const std::string& line, double) {
                                        output += line + "\n";
                                        return Status::Ok();
                                      });
  if (!status.ok()) return status.status().with_context(argv[0]);
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0)
    return error(TM_ERROR_INTERNAL, argv[0], " failed (status ", *status, "): ", output);
  return output;
}

Result<BatchJob> submit_batch(const std::string& conf, const std::vector<std::string>& args,
                              const std::vector<std::string>& env) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  TM_ASSIGN_OR_RETURN(std::string out, slurm_command(conf, argv, env));
  // "ID" or "ID;CLUSTER", then a newline.
  std::string id = out.substr(0, out.find_first_of(";\n"));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    return error(TM_ERROR_INTERNAL, "sbatch printed no job id: '", out, "'");
  return BatchJob{conf, id};
}

std::string batch_job_state(const BatchJob& job) {
  auto out = slurm_command(job.conf, {"squeue", "-h", "-t", "all", "-j", job.job_id, "-o", "%T"});
  if (!out.ok()) return "";
  std::string state = *out;
  while (!state.empty() && (state.back() == '\n' || state.back() == ' ')) state.pop_back();
  return state;
}

bool batch_state_is_final(const std::string& state) {
  for (const char* final_state : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                                  "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"}) {
    if (state == final_state) return true;
  }
  return false;
}

Result<std::string> follow_batch_output(const BatchJob& job, const std::string& path,
                                        Deadline deadline, double timeout_s,
                                        const LineHandler& on_line) {
  UniqueFd fd;
  std::string partial, state;
  double next_state_check = 0;
  int final_seen = 0;  // a final state seen twice in a row: not a requeue's passing state
  while (final_seen < 2) {
    if (deadline.expired())
      return error(TM_ERROR_TIMEOUT, "batch job ", job.job_id, " took longer than ", timeout_s,
                   " s (state ", state, ")");
    if (!fd.valid()) fd = UniqueFd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.valid()) TM_RETURN_IF_ERROR(read_new_lines(fd.get(), partial, on_line));
    if (unix_now() >= next_state_check) {
      state = batch_job_state(job);
      final_seen = batch_state_is_final(state) ? final_seen + 1 : 0;
      next_state_check = unix_now() + kStateEveryS;
    }
    usleep(2000);
  }
  if (fd.valid()) TM_RETURN_IF_ERROR(read_new_lines(fd.get(), partial, on_line));
  if (!partial.empty()) TM_RETURN_IF_ERROR(on_line(partial, unix_now()));
  return state;
}

void cancel_batch(const BatchJob& job) { (void)slurm_command(job.conf, {"scancel", job.job_id}); }

}  // namespace trainmover::bench
