/* srun's --no-kill and --kill-on-bad-exit (srun_flags.h). */
#include "srun_flags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* srun 22.05's short options that take a value (srun(1)); -I, -K and -k
 * take an optional one, glued to the letter: the rest of the bundle. */
static const char kValued[] = "AbBcCdDeFGiJLmMnNopqrStTwWx";

/* As srun reads it: "off" or "no" (any case; and "0") turn it off. */
static void no_kill_value(struct tm_srun_flags* f, const char* v) {
  f->no_kill = strcasecmp(v, "off") != 0 && strcasecmp(v, "no") != 0 && strcmp(v, "0") != 0;
}

static void kill_bad_exit_value(struct tm_srun_flags* f, const char* v) {
  f->kill_bad_exit = strcmp(v, "0") != 0;
}

/* -k / --no-kill (letter 'k') or -K / --kill-on-bad-exit ('K'), with its
 * value or none (""). */
static void set_flag(struct tm_srun_flags* f, char letter, const char* value) {
  if (letter == 'k') {
    if (*value)
      no_kill_value(f, value);
    else
      f->no_kill = 1;
  } else {
    if (*value)
      kill_bad_exit_value(f, value);
    else
      f->kill_bad_exit = 1;
  }
}

static void long_option(struct tm_srun_flags* f, const char* a) {
  if (strcmp(a, "--no-kill") == 0) set_flag(f, 'k', "");
  if (strncmp(a, "--no-kill=", 10) == 0) set_flag(f, 'k', a + 10);
  if (strcmp(a, "--kill-on-bad-exit") == 0) set_flag(f, 'K', "");
  if (strncmp(a, "--kill-on-bad-exit=", 19) == 0) set_flag(f, 'K', a + 19);
}

/* One bundle of short options ("-XlK0"); returns whether the next word is
 * the value of its last letter. */
static int short_options(struct tm_srun_flags* f, const char* a) {
  for (const char* p = a + 1; *p; ++p) {
    if (*p == 'k' || *p == 'K') {
      set_flag(f, *p, p + 1); /* its optional value is the rest */
      return 0;
    }
    if (*p == 'I') return 0; /* likewise */
    if (strchr(kValued, *p)) return p[1] == '\0';
  }
  return 0;
}

void tm_srun_flags_parse_args(struct tm_srun_flags* f, int argc, char* const argv[]) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (strcmp(a, "--") == 0) return;
    if (strncmp(a, "--", 2) == 0)
      long_option(f, a);
    else if (a[0] == '-' && a[1] != '\0' && short_options(f, a))
      ++i;
  }
}

void tm_srun_flags_parse_env(struct tm_srun_flags* f) {
  const char* v = getenv("SLURM_NO_KILL");
  if (v) no_kill_value(f, v);
  v = getenv("SLURM_KILL_BAD_EXIT");
  if (v) kill_bad_exit_value(f, v);
}

enum { kMaxWords = 4096, kCmdlineBytes = 1 << 20 };

/* /proc/self/cmdline split into words; returns the count, or -1. */
static int read_cmdline(char* buf, size_t size, char* words[], int max_words) {
  FILE* in = fopen("/proc/self/cmdline", "r");
  if (!in) return -1;
  size_t n = fread(buf, 1, size - 1, in);
  fclose(in);
  buf[n] = '\0';
  int count = 0;
  for (size_t at = 0; at < n && count < max_words; at += strlen(buf + at) + 1)
    words[count++] = buf + at;
  return count;
}

int tm_srun_flags_check(int job_argc, char* err, size_t errlen) {
  struct tm_srun_flags f = {-1, -1};
  tm_srun_flags_parse_env(&f);
  char* buf = malloc(kCmdlineBytes);
  char** words = malloc(sizeof(char*) * kMaxWords);
  int count = buf && words ? read_cmdline(buf, kCmdlineBytes, words, kMaxWords) : -1;
  if (count >= 0) tm_srun_flags_parse_args(&f, count > job_argc ? count - job_argc : 0, words);
  free(words);
  free(buf);
  if (count < 0) {
    snprintf(err, errlen, "cannot read srun's command line (/proc/self/cmdline)");
    return -1;
  }
  if (f.no_kill != 1) {
    snprintf(err, errlen,
             "the step must outlive a lost node, which Slurm would end it for: run srun with "
             "--no-kill (or SLURM_NO_KILL=1; sbatch --no-kill for a batch job)");
    return -1;
  }
  if (f.kill_bad_exit == 1) {
    snprintf(err, errlen,
             "--kill-on-bad-exit ends the step when one task fails: run srun with "
             "--kill-on-bad-exit=0");
    return -1;
  }
  return 0;
}
