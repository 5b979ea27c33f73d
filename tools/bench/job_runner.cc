#include "job_runner.h"

#include <limits.h>
#include <unistd.h>

#include <algorithm>

#include "common/json.h"
#include "config.h"
#include "launcher/local_job.h"

namespace trainmover::bench {
namespace {

using launcher::LocalJobOptions;
using launcher::LocalJobResult;

JobOutcome failed(Status status, bool not_available = false) {
  JobOutcome outcome;
  outcome.failure = {std::move(status), not_available};
  return outcome;
}

// The first failing rank (or the timeout) as a Status.
Status job_status(const LocalJobResult& result) {
  if (result.first_failed_rank >= 0) {
    return error(TM_ERROR_PEER_FAILED, result.ranks[result.first_failed_rank].describe());
  }
  if (result.timed_out) return error(TM_ERROR_TIMEOUT, "the job ran past --job-timeout");
  return Status::Ok();
}

JobOutcome run_job(const LocalJobOptions& job, const std::vector<SizePlan>& plan,
                   const std::string& elapsed_key) {
  auto result = launcher::run_local_job(job);
  if (!result.ok()) return failed(result.status(), true);
  if (Status s = job_status(result.value()); !s.ok()) return failed(s);
  std::vector<std::string> outputs;
  for (const auto& rank : result->ranks) outputs.push_back(rank.output);
  auto times = times_from_outputs(outputs, plan, elapsed_key);
  if (!times.ok()) return failed(times.status());
  JobOutcome outcome;
  outcome.times = std::move(times.value());
  return outcome;
}

// In the build tree the MPI program sits next to this binary; installed, in
// pkglibexecdir.
Result<std::string> mpi_program() {
  TM_ASSIGN_OR_RETURN(std::string self, self_executable());
  std::string beside = self.substr(0, self.rfind('/') + 1) + "trainmover-bench-mpi";
  if (access(beside.c_str(), X_OK) == 0) return beside;
#ifdef TM_BENCH_MPI_PATH
  if (access(TM_BENCH_MPI_PATH, X_OK) == 0) return std::string(TM_BENCH_MPI_PATH);
#endif
#ifdef TM_BENCH_MPI_PATH
  return error(TM_ERROR_NOT_FOUND, "trainmover-bench-mpi is neither at ", beside, " nor at ",
               TM_BENCH_MPI_PATH);
#else
  return error(TM_ERROR_NOT_FOUND, "trainmover-bench-mpi is not at ", beside);
#endif
}

// The BTLs an OpenMPI label stands for: TCP sockets even between processes
// of one host (as trainmover and gloo), or shared memory (vader).
const char* mpi_btls(const std::string& impl) {
  return impl == kImplOpenmpiShm ? "vader,self" : "tcp,self";
}

// The first line of trainmover-bench-mpi reports the PML and BTLs that
// OpenMPI was told to use; refuse the label otherwise.
Status check_mpi_transport(const std::string& impl, const std::string& output) {
  std::string first = output.substr(0, output.find('\n'));
  TM_ASSIGN_OR_RETURN(Json header, parse_json_object(first));
  auto pml = json_string(header, "pml");
  auto btl = json_string(header, "btl");
  if (pml != "ob1" || btl != mpi_btls(impl)) {
    return error(TM_ERROR_UNSUPPORTED, "OpenMPI did not run with pml ob1 and btl ", mpi_btls(impl),
                 " (pml=", pml.value_or("?"), ", btl=", btl.value_or("?"), ")");
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> self_executable() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return system_error("readlink /proc/self/exe", errno);
  return std::string(path, static_cast<size_t>(n));
}

Result<IterationTimes> times_from_outputs(const std::vector<std::string>& outputs,
                                          const std::vector<SizePlan>& plan,
                                          const std::string& elapsed_key) {
  IterationTimes times(plan.size(), 0.0);
  std::vector<int> seen(plan.size(), 0);
  for (size_t rank = 0; rank < outputs.size(); ++rank) {
    for (std::string_view line : split(outputs[rank], '\n')) {
      if (line.empty() || line.front() != '{') continue;
      TM_ASSIGN_OR_RETURN(Json object, parse_json_object(line));
      if (!object.contains(elapsed_key)) continue;
      TM_ASSIGN_OR_RETURN(double bytes, json_number(object, "bytes"));
      TM_ASSIGN_OR_RETURN(double elapsed, json_number(object, elapsed_key));
      auto it = std::find_if(plan.begin(), plan.end(), [&](const SizePlan& p) {
        return static_cast<double>(p.bytes) == bytes;
      });
      if (it == plan.end())
        return error(TM_ERROR_PROTOCOL, "rank ", rank, " reported an unplanned size ", bytes);
      size_t i = static_cast<size_t>(it - plan.begin());
      times[i] = std::max(times[i], elapsed / it->iters);
      ++seen[i];
    }
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    if (seen[i] == 0)
      return error(TM_ERROR_PROTOCOL, "no time reported for ", plan[i].bytes, " bytes");
  }
  return times;
}

JobOutcome run_worker_job(const std::string& impl, const CollectiveOptions& options,
                          const std::vector<SizePlan>& plan) {
#ifndef HAVE_GLOO
  if (impl == kImplGloo) return failed(error(TM_ERROR_UNSUPPORTED, "gloo is not built in"), true);
#endif
  auto self = self_executable();
  if (!self.ok()) return failed(self.status(), true);
  LocalJobOptions job;
  job.argv = {self.value(), "worker",         "--impl", impl, "--op", collective_name(options.op),
              "--plan",     format_plan(plan)};
  job.nprocs = options.nranks;
  job.timeout = seconds(options.job_timeout_s);
  job.capture_stdout = true;
  return run_job(job, plan, "elapsed_s");
}

JobOutcome run_mpi_job(const std::string& impl, const CollectiveOptions& options,
                       const std::vector<SizePlan>& plan) {
#ifndef HAVE_MPI
  (void)impl;
  (void)options;
  (void)plan;
  return failed(error(TM_ERROR_UNSUPPORTED, "OpenMPI is not built in"), true);
#else
  auto program = mpi_program();
  if (!program.ok()) return failed(program.status(), true);
  LocalJobOptions job;
  // pml ob1 and the label's BTLs (mpi_btls).
  job.argv = {TM_MPIRUN,
              "--allow-run-as-root",
              "--oversubscribe",
              "-np",
              std::to_string(options.nranks),
              "--mca",
              "pml",
              "ob1",
              "--mca",
              "btl",
              mpi_btls(impl),
              "--mca",
              "btl_tcp_if_include",
              "lo",
              "--mca",
              "oob_tcp_if_include",
              "lo",
              program.value(),
              collective_name(options.op),
              format_plan_json(plan)};
  job.nprocs = 1;  // mpirun starts the ranks
  job.timeout = seconds(options.job_timeout_s);
  job.capture_stdout = true;
  auto result = launcher::run_local_job(job);
  if (!result.ok()) return failed(result.status(), true);
  if (Status s = job_status(result.value()); !s.ok()) return failed(s.with_context("mpirun"), true);
  const std::string& output = result->ranks[0].output;
  if (Status s = check_mpi_transport(impl, output); !s.ok()) return failed(s, true);
  auto times = times_from_outputs({output}, plan, "elapsed_max_s");
  if (!times.ok()) return failed(times.status());
  JobOutcome outcome;
  outcome.times = std::move(times.value());
  return outcome;
#endif
}

}  // namespace trainmover::bench
