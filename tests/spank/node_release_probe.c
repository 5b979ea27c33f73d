/* node_release_probe JOBID NODE: gives NODE of job JOBID back to Slurm with
 * tm_job_release_node. Exit status: 0 done, 1 refused (message on stderr),
 * 2 bad usage. */
#include <stdio.h>
#include <stdlib.h>

#include <slurm/slurm.h>

#include "spank/node_release.h"

int main(int argc, char** argv) {
  char* end = NULL;
  unsigned long job = argc == 3 ? strtoul(argv[1], &end, 10) : 0;
  if (argc != 3 || !end || *end != '\0' || job == 0) {
    fprintf(stderr, "usage: node_release_probe JOBID NODE\n");
    return 2;
  }
  slurm_init(NULL);
  char err[512];
  int rc = tm_job_release_node((uint32_t)job, argv[2], err, sizeof err);
  if (rc != 0) fprintf(stderr, "node_release_probe: %s\n", err);
  slurm_fini();
  return rc == 0 ? 0 : 1;
}
