/*
 * What srun was asked about failures, for the srun side: a TrainMover step
 * must outlive a lost node and a failed task, and SPANK gives no way to
 * read or set srun's own --no-kill and --kill-on-bad-exit. So this reads
 * them where srun does: its environment (SLURM_NO_KILL,
 * SLURM_KILL_BAD_EXIT) and its own arguments, which win: srun's command
 * line (/proc/self/cmdline) without the program's arguments, whose count
 * the caller takes from SPANK (S_JOB_ARGV), so a program's own "--no-kill"
 * never counts. srun's arguments are read as srun's getopt does (Slurm
 * 22.05): long options by name (--no-kill[=off],
 * --kill-on-bad-exit[=0|1]), short ones bundled (-lk, -Xk, -K0; -koff), the
 * value of a short option that takes one skipped ("-J -k" names a job).
 *
 * Plain C, no Slurm: the parser is unit-tested on its own.
 */
#ifndef TRAINMOVER_SPANK_SRUN_FLAGS_H
#define TRAINMOVER_SPANK_SRUN_FLAGS_H

#include <stddef.h>

/* -1: not given; else 0 or 1. */
struct tm_srun_flags {
  int no_kill;
  int kill_bad_exit;
};

/* Applies srun's own arguments argv[1..argc) (argv[0] is srun) to `f`, the
 * last one given winning. */
void tm_srun_flags_parse_args(struct tm_srun_flags* f, int argc, char* const argv[]);

/* Applies SLURM_NO_KILL and SLURM_KILL_BAD_EXIT to `f`. */
void tm_srun_flags_parse_env(struct tm_srun_flags* f);

/* Reads the environment, then this process's command line less its last
 * `job_argc` words (the program and its arguments). Returns 0, or -1 with
 * a message naming the flag to add in `err`. */
int tm_srun_flags_check(int job_argc, char* err, size_t errlen);

#endif
