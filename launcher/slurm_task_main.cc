#include "slurm_task_main.h"

#include <cstring>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "common/clock.h"
#include "slurm_task.h"

namespace trainmover::launcher {

bool is_slurm_task(int argc, char** argv) {
  return argc > 1 && std::strcmp(argv[1], "--slurm-task") == 0;
}

int slurm_task_main(int argc, char** argv) {
  SlurmTaskOptions options;
  bool task = false, standby = false;
  int exit_report = 0, wait_status = 0;
  double kill_grace_s = 2;
  cli::CommandLine command_line(
      "trainmover-launch --slurm-task",
      "trainmover-launch --slurm-task (--slot K | --standby-task) [OPTIONS] [--] PROGRAM [ARGS...]",
      "Run PROGRAM as one task of a Slurm step under TrainMover (what the SPANK\n"
      "plugin trainmover.so(8) execs in every task; not for direct use). The job\n"
      "comes from the TRAINMOVER_* variables the srun side set. The task's exit is\n"
      "reported to the coordinator at once; a standby is stopped when every slot\n"
      "finished. Under srun --mpi=pmix PROGRAM gets TRAINMOVER_STORE=pmix,tcp://...\n"
      "(first wire-up through PMIx; TRAINMOVER_PMIX_WIREUP=0: srun's store alone)\n"
      "and TRAINMOVER_PMIX_EVENTS=1 (PMIx failure events reported; 0: off).\n");
  command_line.flag("slurm-task", task, "the Slurm task mode (the first argument)")
      .integer("slot", "K", 0, 4095, options.slot, "serve slot K (an active task)")
      .flag("standby-task", standby, "start as a standby")
      .text("node", "NAME", options.host,
            "this node's name, as the processes register (default: $SLURMD_NODENAME)")
      .duration("kill-grace", "SEC", 0, 3600, kill_grace_s,
                "time between SIGTERM and SIGKILL when the task is stopped (default 2)")
      .integer("exit-report", "PID", 1, 1 << 22, exit_report,
               "report instead that the task launcher PID ended (slurm_spank_task_exit)")
      .integer("wait-status", "S", 0, 65535, wait_status,
               "with --exit-report: the launcher's wait status")
      .operands(cli::Operands::kOptionalProgram, "PROGRAM", options.argv)
      .epilog(
          "Exit status: 0 when PROGRAM exited 0, or failed and its exit reached the\n"
          "coordinator, or was a standby stopped at the end; 3 when the coordinator\n"
          "stopped the job; else PROGRAM's status (128+N for signal N); 2 on bad\n"
          "arguments; 1 if it could not start.\n");
  if (auto code = command_line.parse(argc, argv)) return *code;
  if (exit_report > 0) {
    if (!options.argv.empty()) return command_line.usage_error("--exit-report takes no PROGRAM");
    return report_task_exit(exit_report, wait_status);
  }
  if ((options.slot >= 0) == standby)
    return command_line.usage_error("give exactly one of --slot K and --standby-task");
  if (options.argv.empty()) return command_line.usage_error("no PROGRAM given");
  options.kill_grace = seconds(kill_grace_s);
  return run_slurm_task(options);
}

}  // namespace trainmover::launcher
