/* Giving a node of the job back to Slurm (see node_release.h). */
#include "node_release.h"

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The job's nodes without `node`, as a ranged list ("n[1-2]"), malloc'ed;
 * NULL with `err` set when `node` is not the job's or is its last. */
static char* nodes_without(const char* nodes, const char* node, char* err, size_t errlen) {
  hostlist_t all = slurm_hostlist_create(nodes);
  hostlist_t kept = slurm_hostlist_create(NULL);
  char* result = NULL;
  int found = 0;
  char* host;
  while (all && kept && (host = slurm_hostlist_shift(all)) != NULL) {
    if (strcmp(host, node) == 0) {
      found = 1;
    } else {
      slurm_hostlist_push_host(kept, host);
    }
    free(host);
  }
  if (!all || !kept) {
    snprintf(err, errlen, "cannot parse the job's node list '%s'", nodes);
  } else if (!found) {
    snprintf(err, errlen, "node %s is not one of the job's nodes (%s)", node, nodes);
  } else if (slurm_hostlist_count(kept) == 0) {
    snprintf(err, errlen, "node %s is the job's last node", node);
  } else {
    result = slurm_hostlist_ranged_string_malloc(kept);
  }
  if (kept) slurm_hostlist_destroy(kept);
  if (all) slurm_hostlist_destroy(all);
  return result;
}

int tm_job_release_node(uint32_t job_id, const char* node, char* err, size_t errlen) {
  job_info_msg_t* jobs = NULL;
  if (slurm_load_job(&jobs, job_id, SHOW_DETAIL) != SLURM_SUCCESS || !jobs ||
      jobs->record_count != 1) {
    snprintf(err, errlen, "cannot load job %u: %s", job_id, slurm_strerror(slurm_get_errno()));
    if (jobs) slurm_free_job_info_msg(jobs);
    return -1;
  }
  char* kept =
      nodes_without(jobs->job_array[0].nodes ? jobs->job_array[0].nodes : "", node, err, errlen);
  slurm_free_job_info_msg(jobs);
  if (!kept) return -1;
  job_desc_msg_t update;
  slurm_init_job_desc_msg(&update);
  update.job_id = job_id;
  update.req_nodes = kept;
  int rc = slurm_update_job(&update);
  if (rc != SLURM_SUCCESS)
    snprintf(err, errlen, "slurmctld refused to shrink job %u to %s: %s", job_id, kept,
             slurm_strerror(slurm_get_errno()));
  free(kept);
  return rc == SLURM_SUCCESS ? 0 : -1;
}
